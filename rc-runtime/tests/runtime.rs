//! rc-runtime end to end. Tests that need a GPU print why they are skipped and pass when there is
//! none (CI has no driver: every CUDA call then says "no device"); the others check what must
//! hold everywhere.

mod common;

use common::*;
use rc_core::LengthError;
use rc_runtime::cust::memory::DeviceBuffer;
use rc_runtime::cust::stream::{Stream, StreamFlags};
use rc_runtime::Error;

#[test]
fn gpu_is_either_described_or_absent_with_a_reason() {
    match rc_runtime::gpu() {
        Ok(info) => {
            println!("found {info}");
            assert!(!info.name.is_empty());
            assert!(info.compute_capability.0 >= 3, "compute capability {:?}", info.compute_capability);
            assert!(info.multiprocessors > 0);
            assert!(info.total_memory_bytes > 0);
        }
        Err(e) => {
            let text = e.to_string();
            println!("{text}");
            assert!(e.is_no_device(), "expected Error::NoDevice without a GPU, got {e:?}");
            assert!(text.starts_with("no CUDA device: "), "{text}");
            // Without a driver the reason is cuInit's error, saying that the library is missing.
            if text.contains("could not be loaded") {
                assert!(
                    text.starts_with(
                        "no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE (100): the NVIDIA driver could not be loaded (libcuda.so.1"
                    ),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn gpu_is_repeatable() {
    // cuInit may be called many times; the answer does not change.
    let first = rc_runtime::gpu().map_err(|e| e.to_string());
    let second = rc_runtime::gpu().map_err(|e| e.to_string());
    assert_eq!(first, second);
}

#[test]
fn run_reports_a_short_input_before_touching_cuda() {
    let err = rc_runtime::run(&BOX3, &[&[1.0, 2.0]], (1.0,)).expect_err("2 elements < window of 3");
    assert!(
        matches!(
            err,
            Error::Length { stencil: "box3", source: LengthError::InputShorterThanWindow { window: 3, got: 2 } }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "stencil `box3`: input has 2 elements, but boundary `valid` needs at least one whole window of 3 (2 * radius + 1)"
    );
}

#[test]
fn run_on_an_empty_input_needs_no_gpu() {
    assert_eq!(rc_runtime::run(&BOX3, &[&[]], (1.0,)).expect("empty in, empty out"), vec![Vec::<f32>::new()]);
}

#[test]
fn run_matches_the_cpu_reference_bit_for_bit() {
    let Some(gpu) = gpu_or_skip("run_matches_the_cpu_reference_bit_for_bit") else { return };
    println!("on {gpu}");
    for n in [3, 4, 31, 32, 33, 255, 256, 257, 10_000, 1 << 20] {
        let input = input(n);
        let got = rc_runtime::run(&BOX3, &[&input], (0.25,)).expect("runs").remove(0);
        let want = BOX3.reference_vec(&[&input], (0.25,)).expect("reference").remove(0);
        assert_eq!(got.len(), n - 2);
        let first_difference = got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits());
        assert_eq!(first_difference, None, "n = {n}");
    }
}

#[test]
fn launch_is_asynchronous_on_the_callers_stream_and_loads_once() {
    let Some(_) = gpu_or_skip("launch_is_asynchronous_on_the_callers_stream_and_loads_once") else { return };
    let _context = rc_runtime::cust::quick_init().expect("context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let input = input(5000);
    let device_input = DeviceBuffer::from_slice(&input).expect("copy in");
    let mut device_output = DeviceBuffer::from_slice(&vec![0.0f32; 4998]).expect("alloc");

    rc_runtime::launch(&BOX3, &stream, &[&device_input], &mut [&mut device_output], (2.0,)).expect("first launch");
    let cached = rc_runtime::cached_kernel_count();
    for _ in 0..10 {
        rc_runtime::launch(&BOX3, &stream, &[&device_input], &mut [&mut device_output], (3.0,)).expect("launch");
    }
    assert_eq!(rc_runtime::cached_kernel_count(), cached, "repeated launches must not load the module again");
    stream.synchronize().expect("sync");
    let got = device_output.as_host_vec().expect("copy out");
    assert_eq!(got, BOX3.reference_vec(&[&input], (3.0,)).expect("reference").remove(0));

    // Wrong output length: refused before the launch, saying what was expected.
    let mut short = DeviceBuffer::from_slice(&[0.0f32; 10]).expect("alloc");
    let err =
        rc_runtime::launch(&BOX3, &stream, &[&device_input], &mut [&mut short], (1.0,)).expect_err("wrong length");
    assert_eq!(
        err.to_string(),
        "stencil `box3`: output has 10 elements, expected 4998 for an input of 5000 elements with boundary `valid`"
    );
}

#[test]
fn a_rejected_ptx_comes_back_with_the_jit_log() {
    let Some(_) = gpu_or_skip("a_rejected_ptx_comes_back_with_the_jit_log") else { return };
    let err = rc_runtime::run(&BROKEN, &[&input(100)], (1.0,)).expect_err("the PTX is invalid");
    let Error::ModuleLoad(failure) = &err else { panic!("expected ModuleLoad, got {err:?}") };
    println!("{err}");
    assert!(failure.log.contains("frobnicate"), "log: {}", failure.log);
    assert_eq!(err.ptx(), Some(BROKEN_PTX));
    let text = err.to_string();
    assert!(text.starts_with("loading the PTX of stencil `broken` (entry `rc_test_broken`) failed: "), "{text}");
    assert!(text.contains("JIT error log:\n"), "{text}");
    assert!(!text.contains(".address_size"), "Display must not dump the PTX: {text}");
}

#[test]
fn a_nul_in_the_ptx_is_an_error_not_a_panic() {
    let Some(_) = gpu_or_skip("a_nul_in_the_ptx_is_an_error_not_a_panic") else { return };
    let err = rc_runtime::run(&WITH_NUL, &[&input(100)], (1.0,)).expect_err("NUL byte");
    assert_eq!(
        err.to_string(),
        "the PTX of stencil `with_nul` contains a NUL byte at byte 12 of 13; expected PTX text without NUL bytes"
    );
}

#[test]
fn parameters_the_kernel_does_not_declare_are_refused() {
    let Some(_) = gpu_or_skip("parameters_the_kernel_does_not_declare_are_refused") else { return };
    let err = rc_runtime::run(&BOX3_WRONG_PARAMS, &[&input(100)], (1.0,)).expect_err("f64 vs .f32");
    assert_eq!(
        err.to_string(),
        "kernel ABI mismatch for stencil `box3_wrong_params`: expected `.entry rc_test_box3` taking \
         (.u64 input, .u64 output, .u64 n, .u64 n_out, .f64 p0), got 5 parameters: \
         (.u64 (8 bytes), .u64 (8 bytes), .u64 (8 bytes), .u64 (8 bytes), .f32 (4 bytes))"
    );
}

#[test]
fn run_without_a_gpu_says_no_device_with_the_same_reason_as_gpu() {
    let Err(no_gpu) = rc_runtime::gpu() else {
        println!("skipping run_without_a_gpu_says_no_device_with_the_same_reason_as_gpu: there is a GPU");
        return;
    };
    let err = rc_runtime::run(&BOX3, &[&input(100)], (1.0,)).expect_err("no GPU to run on");
    assert!(err.is_no_device(), "{err:?}");
    assert_eq!(err.to_string(), no_gpu.to_string());
}
