//! Builds rc-cuda-stub's static `libcuda` (see src/lib.rs for why) and links it into every binary
//! that depends on this crate.
//!
//! Outputs, on x86-64 Linux:
//! - `$OUT_DIR/librc_cuda_shim.a`, linked whole into dependents' binaries: one forwarding
//!   function per name in `cu_functions.txt` (every `cu*` function cust_raw declares). The first
//!   call loads `libcuda.so.1` with `dlopen` and looks every name up; after that each function
//!   jumps straight to the driver's. Without a driver every function returns
//!   `CUDA_ERROR_NO_DEVICE`, and `cuGetErrorName`/`cuGetErrorString` say why.
//! - `$OUT_DIR/lib64/libcuda.a`, an empty archive in the link search path, for the `-lcuda` that
//!   cust_raw passes: the symbols are already defined, so nothing is taken from it, and no
//!   `libcuda.so.1` is recorded as needed.
//!
//! Before that it checks what cust_raw's build script (find_cuda_helper 0.2) is about to check, and
//! stops with the one configuration step that fixes it, instead of cust_raw's bare panic.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// `CUresult` values the shim answers itself.
const CUDA_ERROR_NO_DEVICE: u32 = 100;
const CUDA_ERROR_NOT_FOUND: u32 = 500;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cu_functions.txt");
    println!("cargo:rerun-if-env-changed=CUDA_LIBRARY_PATH");
    println!("cargo:rerun-if-env-changed=DOCS_RS");

    if let Err(message) = check_cust_raw_will_find_cuda() {
        eprintln!("{message}");
        std::process::exit(1);
    }
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os != "linux" || arch != "x86_64" {
        // No shim: cust's `-lcuda` links the installed driver library, which the binary then needs.
        println!("cargo:warning=rc-cuda-stub: no static libcuda for {arch}-{os} (only x86_64 Linux); binaries need the CUDA driver library to start");
        return;
    }
    if let Err(message) = build_shim() {
        eprintln!("rc-cuda-stub: {message}");
        std::process::exit(1);
    }
}

/// The folders find_cuda_helper 0.2.0 accepts on Linux: an entry of `CUDA_LIBRARY_PATH`,
/// `/opt/cuda`, `/usr/local/cuda` or `/usr/local/cuda-*` with a `lib64/` folder (or a
/// `targets/x86_64-linux/include/cuda.h`). It panics when there is none, unless `DOCS_RS` is set.
fn check_cust_raw_will_find_cuda() -> Result<(), String> {
    if env::var_os("DOCS_RS").is_some() || env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return Ok(());
    }
    let mut candidates: Vec<PathBuf> =
        env::var("CUDA_LIBRARY_PATH").map(|p| p.split(':').map(PathBuf::from).collect()).unwrap_or_default();
    candidates.push("/opt/cuda".into());
    candidates.push("/usr/local/cuda".into());
    if let Ok(entries) = fs::read_dir("/usr/local") {
        candidates.extend(
            entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("cuda-")).map(|e| e.path()),
        );
    }
    let found = candidates
        .iter()
        .any(|base| base.join("lib64").is_dir() || base.join("targets/x86_64-linux/include/cuda.h").is_file());
    if found {
        return Ok(());
    }
    Err(format!(
        "error: rc's `cust` feature (on by default) builds cust 0.3.2, whose build scripts (cust's and \
         cust_raw's, through find_cuda_helper) stop with \"Could not find a cuda installation\" unless a folder named in \
         CUDA_LIBRARY_PATH (here: {}), /opt/cuda or /usr/local/cuda* has a `lib64/` folder. No CUDA is \
         needed: rc links its own libcuda, which loads the driver when the program runs. Add this to \
         `.cargo/config.toml` beside your Cargo.toml (x86-64 Linux has `/lib64`, the dynamic loader's folder):\n\n\
         [env]\nCUDA_LIBRARY_PATH = \"/\"\n\n\
         or depend on rc with `default-features = false` (CPU only) or `default-features = false, features = \
         [\"cudarc\"]` (needs no build setup).",
        env::var("CUDA_LIBRARY_PATH").map(|p| format!("{p:?}")).unwrap_or_else(|_| "not set".into())
    ))
}

fn build_shim() -> Result<(), String> {
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| format!("OUT_DIR: {e}"))?);
    let names = fs::read_to_string("cu_functions.txt").map_err(|e| format!("cannot read cu_functions.txt: {e}"))?;
    let names: Vec<&str> = names.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    for name in &names {
        if !name.starts_with("cu") || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("cu_functions.txt: expected a C identifier starting with `cu`, got {name:?}"));
        }
    }
    let source = out_dir.join("rc_cuda_shim.c");
    fs::write(&source, shim_source(&names)).map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    cc::Build::new()
        .file(&source)
        .cargo_metadata(false)
        .try_compile("rc_cuda_shim")
        .map_err(|e| format!("building the static libcuda shim with the C compiler failed: {e}"))?;
    // Whole: the forwarding functions must be there before the linker reaches `-lcuda`, whatever
    // order it sees the archives in. Not bundled into the rlib, so the linker gets the archive.
    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static:+whole-archive,-bundle=rc_cuda_shim");

    let lib_dir = out_dir.join("lib64");
    fs::create_dir_all(&lib_dir).map_err(|e| format!("cannot create {}: {e}", lib_dir.display()))?;
    write_empty_archive(&lib_dir.join("libcuda.a"))?;
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    Ok(())
}

/// An `ar` archive with no members: all `-lcuda` needs to be satisfied.
fn write_empty_archive(path: &Path) -> Result<(), String> {
    fs::write(path, b"!<arch>\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// C source of the shim: the loader in C, one x86-64 forwarding function per name in assembly
/// (a tail jump keeps every argument register and stack argument as the caller left them, so one
/// shape serves functions of any signature).
fn shim_source(names: &[&str]) -> String {
    let count = names.len();
    let mut c = String::new();
    let _ = write!(
        c,
        r#"/* Generated by rc-cuda-stub/build.rs from cu_functions.txt: the CUDA driver's entry points,
 * each forwarding to libcuda.so.1 loaded on first use, or answering CUDA_ERROR_NO_DEVICE when
 * there is no driver. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define COUNT {count}
/* Filled once by load(); read by the forwarding functions. Hidden: no other object sees them. */
__attribute__((visibility("hidden"))) void *rc_cuda_table[COUNT];
static const char *const names[COUNT] = {{
"#
    );
    for name in names {
        let _ = writeln!(c, "    \"{name}\",");
    }
    let _ = write!(
        c,
        r#"}};
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *driver;
static char why[512];

static int no_driver(void) {{ return {CUDA_ERROR_NO_DEVICE}; }}
static int missing(void) {{ return {CUDA_ERROR_NOT_FOUND}; }}

/* Without a driver, cust still asks for error texts (its Display fails if these do). */
static int error_name(int error, const char **name) {{
    if (name == NULL) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *name = error == 0 ? "CUDA_SUCCESS" : error == {CUDA_ERROR_NO_DEVICE} ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_(no driver to name it)";
    return 0;
}}
static int error_string(int error, const char **text) {{
    if (text == NULL) return 1;
    *text = error == 0 ? "no error" : error == {CUDA_ERROR_NO_DEVICE} ? why : "unknown error (no driver to describe it)";
    return 0;
}}

static void load(void) {{
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == NULL) {{
        const char *message = dlerror();
        snprintf(why, sizeof why, "no CUDA-capable device is detected: the NVIDIA driver could not be loaded (%s)",
                 message != NULL ? message : "dlopen failed");
    }}
    for (int i = 0; i < COUNT; i++) {{
        void *function = driver != NULL ? dlsym(driver, names[i]) : NULL;
        if (function == NULL) {{
            if (driver == NULL && strcmp(names[i], "cuGetErrorName") == 0) function = (void *)error_name;
            else if (driver == NULL && strcmp(names[i], "cuGetErrorString") == 0) function = (void *)error_string;
            else function = driver != NULL ? (void *)missing : (void *)no_driver;
        }}
        __atomic_store_n(&rc_cuda_table[i], function, __ATOMIC_RELEASE);
    }}
}}

/* Called by a forwarding function whose slot is still empty: loads everything once. */
__attribute__((visibility("hidden"))) void *rc_cuda_resolve(unsigned index) {{
    pthread_once(&once, load);
    return rc_cuda_table[index];
}}

/* The slow path of every forwarding function (index in %eax): keeps the argument registers,
 * resolves, and jumps on. 6 pushes + 136 bytes leave the stack 16-byte aligned for the call. */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".type rc_cuda_slow, @function\n"
    "rc_cuda_slow:\n"
    "    pushq %rdi\n    pushq %rsi\n    pushq %rdx\n    pushq %rcx\n    pushq %r8\n    pushq %r9\n"
    "    subq $136, %rsp\n"
    "    movdqu %xmm0, 0(%rsp)\n    movdqu %xmm1, 16(%rsp)\n    movdqu %xmm2, 32(%rsp)\n    movdqu %xmm3, 48(%rsp)\n"
    "    movdqu %xmm4, 64(%rsp)\n    movdqu %xmm5, 80(%rsp)\n    movdqu %xmm6, 96(%rsp)\n    movdqu %xmm7, 112(%rsp)\n"
    "    movl %eax, %edi\n"
    "    call rc_cuda_resolve\n"
    "    movdqu 0(%rsp), %xmm0\n    movdqu 16(%rsp), %xmm1\n    movdqu 32(%rsp), %xmm2\n    movdqu 48(%rsp), %xmm3\n"
    "    movdqu 64(%rsp), %xmm4\n    movdqu 80(%rsp), %xmm5\n    movdqu 96(%rsp), %xmm6\n    movdqu 112(%rsp), %xmm7\n"
    "    addq $136, %rsp\n"
    "    popq %r9\n    popq %r8\n    popq %rcx\n    popq %rdx\n    popq %rsi\n    popq %rdi\n"
    "    jmp *%rax\n"
    ".size rc_cuda_slow, .-rc_cuda_slow\n"
"#
    );
    for (i, name) in names.iter().enumerate() {
        let _ = write!(
            c,
            "    \".globl {name}\\n.type {name}, @function\\n.p2align 4\\n{name}:\\n\"\n\
             \x20   \"    movq rc_cuda_table+{offset}(%rip), %rax\\n    testq %rax, %rax\\n    je 1f\\n    jmp *%rax\\n\"\n\
             \x20   \"1:  movl ${i}, %eax\\n    jmp rc_cuda_slow\\n.size {name}, .-{name}\\n\"\n",
            offset = 8 * i
        );
    }
    c.push_str(");\n");
    c
}
