//! The static libcuda forwards to whatever `libcuda.so.1` the process can load, with every
//! argument intact, and answers "no device" when there is none. Each case runs in a child process
//! of this test binary, so that it starts with its own `LD_LIBRARY_PATH` and an unloaded shim.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::env;
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

use rc_cuda_stub as _;

extern "C" {
    fn cuInit(flags: u32) -> u32;
    fn cuGetErrorString(error: u32, text: *mut *const c_char) -> u32;
    fn cuLaunchKernel(
        function: *mut c_void,
        grid_x: u32,
        grid_y: u32,
        grid_z: u32,
        block_x: u32,
        block_y: u32,
        block_z: u32,
        shared_mem_bytes: u32,
        stream: *mut c_void,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> u32;
    fn cuTexRefSetMipmapLevelClamp(texture: *mut c_void, min: f32, max: f32) -> u32;
}

/// A stand-in driver: each function returns 0 exactly when it received the arguments the child
/// passes below, else a code that says which argument was wrong.
const FAKE_DRIVER: &str = r#"
int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    if (f != (void *)0x1000) return 11;
    if (gx != 2 || gy != 3 || gz != 4 || bx != 5 || by != 6 || bz != 7) return 12;
    /* shared, stream, params and extra arrive on the stack */
    if (shared != 8 || stream != (void *)0x2000 || params != (void **)0x3000 || extra != (void **)0x4000) return 13;
    return 0;
}
int cuTexRefSetMipmapLevelClamp(void *texture, float min, float max) {
    return texture == (void *)0x5000 && min == 1.5f && max == -2.25f ? 0 : 21;
}
"#;

/// What a child does first (the first call takes the shim's loading path), printed as a code.
fn child(case: &str) {
    let code = match case {
        "init" => unsafe { cuInit(0) },
        // SAFETY (all three): the fake driver only compares the arguments.
        "launch" => unsafe {
            cuLaunchKernel(
                0x1000 as *mut c_void,
                2,
                3,
                4,
                5,
                6,
                7,
                8,
                0x2000 as *mut c_void,
                0x3000 as *mut *mut c_void,
                0x4000 as *mut *mut c_void,
            )
        },
        "floats" => unsafe { cuTexRefSetMipmapLevelClamp(0x5000 as *mut c_void, 1.5, -2.25) },
        other => panic!("unknown case {other}"),
    };
    // The fast path too: a second call, now that the functions are resolved.
    let again = if case == "init" { unsafe { cuInit(0) } } else { code };
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointer.
    let described = unsafe { cuGetErrorString(code, &mut text) };
    let text = if described == 0 && !text.is_null() {
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    } else {
        format!("(cuGetErrorString returned {described})")
    };
    println!("code {code} again {again} text {text}");
}

fn run_child(case: &str, library_dir: &Path) -> String {
    let output = Command::new(env::current_exe().expect("test binary"))
        .args(["--exact", "the_child", "--nocapture", "--test-threads=1"])
        .env("RC_SHIM_CASE", case)
        .env("LD_LIBRARY_PATH", library_dir)
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "child {case}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // The test harness prints its own words on the same line.
    let at = stdout.find("code ").unwrap_or_else(|| panic!("child {case} printed {stdout}"));
    stdout[at..].lines().next().unwrap_or_default().to_owned()
}

#[test]
fn the_child() {
    if let Ok(case) = env::var("RC_SHIM_CASE") {
        child(&case);
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = env::temp_dir().join(format!("rc-cuda-stub-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn calls_reach_the_loaded_driver_with_every_argument() {
    let dir = scratch("fake-driver");
    let source = dir.join("fake.c");
    std::fs::write(&source, FAKE_DRIVER).expect("write the fake driver");
    let compiler = env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&compiler)
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(&source)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "{compiler} failed");
    assert!(run_child("init", &dir).starts_with("code 0 again 0 "));
    assert!(run_child("launch", &dir).starts_with("code 0 "), "register and stack arguments");
    assert!(run_child("floats", &dir).starts_with("code 0 "), "floating-point arguments");
}

#[test]
fn without_a_driver_every_call_says_no_device_and_why() {
    let has_driver = Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1 "));
    if has_driver {
        eprintln!("skipping without_a_driver_every_call_says_no_device_and_why: this machine has a driver");
        return;
    }
    let line = run_child("init", &scratch("no-driver"));
    assert!(line.starts_with("code 100 again 100 text no CUDA-capable device is detected: the NVIDIA driver could not be loaded (libcuda.so.1: "), "{line}");
    assert!(run_child("launch", &scratch("no-driver")).starts_with("code 100 "));
}
