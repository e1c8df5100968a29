//! Misuse of `launch` that only real device buffers can show: an output that overlaps an input
//! (two views of one allocation), and buffers allocated in another CUDA context. Each must come
//! back as its error before anything is launched; the legitimate neighbours of each mistake
//! (adjacent views of one allocation, managed memory) must still launch and match the CPU.
//!
//! Every test here needs a GPU and is `#[ignore]`d, as in `tests/gpu.rs`.

mod support;
use rc::prelude::*;
use rc::runtime::cust::context::legacy::{Context as LegacyContext, ContextFlags, ContextStack};
use rc::runtime::cust::device::Device;
use rc::runtime::cust::memory::{CopyDestination, DeviceBuffer, DevicePointer, DeviceSlice, UnifiedBuffer};
use rc::runtime::Error;
use rc::testdata::poison;
use support::gpu;

// Round-robin reads buffers element by element, so views at any offset launch: these tests are
// about overlap, not alignment (the vector distributions' 16-byte rule has its own test).
#[stencil(radius = 1, warp = 32, outputs_per_thread = 4, distribution = round_robin)]
fn box3(w: Window<f32>) -> f32 {
    (w[-1] + w[0] + w[1]) / 3.0
}

/// Two input fields, round-robin like `box3`.
#[stencil(radius = 1, warp = 32, outputs_per_thread = 4, distribution = round_robin)]
fn product3(u: Window<f32>, k: Window<f32>) -> f32 {
    u[-1] * k[1] + u[0] * k[0] + u[1] * k[-1]
}

/// Input length: odd, so the last tile is partial.
const N: usize = 4099;
/// `box3`'s output length for `N` inputs (boundary `valid`).
const N_OUT: usize = N - 2;

fn input() -> Vec<f32> {
    (0..N).map(|i| (i as f32 * 0.37).sin()).collect()
}

fn reference(input: &[f32]) -> Vec<f32> {
    box3::KERNEL.reference_vec(&[input], ()).expect("the CPU reference runs").remove(0)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn host(slice: &DeviceSlice<f32>) -> Vec<f32> {
    let mut values = vec![0.0; slice.len()];
    slice.copy_to(&mut values[..]).expect("copy to the host");
    values
}

/// The byte range `[start, end)` of a device slice of f32.
fn range(slice: &DeviceSlice<f32>) -> (u64, u64) {
    let start = slice.as_device_ptr().as_raw();
    (start, start + 4 * slice.len() as u64)
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn an_output_overlapping_the_input_is_refused_before_any_launch() {
    let Some((_context, stream)) = gpu("an_output_overlapping_the_input_is_refused_before_any_launch") else {
        return;
    };
    let data = input();
    let mut contents = data.clone();
    contents.extend(vec![poison::<f32>(); N]);
    let buffer = DeviceBuffer::from_slice(&contents).expect("allocate");
    let input = buffer.index(0..N);

    // The output starting at, inside and on the last element of the input; then one that starts
    // before a later input and ends on its first element.
    let mut cases: Vec<(DeviceSlice<f32>, DeviceSlice<f32>, u64)> = [0, 1, 500, N - 1]
        .into_iter()
        .map(|start| (input, buffer.index(start..start + N_OUT), 4 * (N - start).min(N_OUT) as u64))
        .collect();
    cases.push((buffer.index(N_OUT - 1..N_OUT - 1 + N), buffer.index(0..N_OUT), 4));
    for (input, mut output, shared) in cases {
        let err = rc::runtime::launch(&box3::KERNEL, &stream, &[&input], &mut [&mut output], ())
            .expect_err("the output overlaps the input");
        let (input_range, output_range) = (range(&input), range(&output));
        assert!(
            matches!(err, Error::Aliasing { stencil: "box3", ref buffer, ref written, input, output } if buffer == "input" && written == "output" && input == input_range && output == output_range),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.starts_with("stencil `box3`: the output buffer (device bytes "), "{text}");
        assert!(text.contains(&format!(" in {shared} bytes; expected disjoint buffers")), "{text}");
    }
    // Nothing ran: the whole allocation is as it was uploaded.
    stream.synchronize().expect("nothing queued can fail");
    assert_eq!(bits(&host(&buffer)), bits(&contents), "a refused launch wrote to the buffer");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn adjacent_views_of_one_allocation_launch() {
    let Some((_context, stream)) = gpu("adjacent_views_of_one_allocation_launch") else { return };
    let data = input();
    let want = reference(&data);

    // Output right after the input: the ranges touch and do not overlap.
    let mut contents = data.clone();
    contents.extend(vec![poison::<f32>(); N_OUT]);
    let buffer = DeviceBuffer::from_slice(&contents).expect("allocate");
    let input = buffer.index(0..N);
    let mut output = buffer.index(N..N + N_OUT);
    rc::runtime::launch(&box3::KERNEL, &stream, &[&input], &mut [&mut output], ()).expect("adjacent, not overlapping");
    stream.synchronize().expect("kernel runs");
    let got = host(&buffer);
    assert_eq!(bits(&got[..N]), bits(&data), "the input changed");
    assert_eq!(bits(&got[N..]), bits(&want), "output after the input");

    // Output right before the input.
    let mut contents = vec![poison::<f32>(); N_OUT];
    contents.extend(&data);
    let buffer = DeviceBuffer::from_slice(&contents).expect("allocate");
    let input = buffer.index(N_OUT..N_OUT + N);
    let mut output = buffer.index(0..N_OUT);
    rc::runtime::launch(&box3::KERNEL, &stream, &[&input], &mut [&mut output], ()).expect("adjacent, not overlapping");
    stream.synchronize().expect("kernel runs");
    let got = host(&buffer);
    assert_eq!(bits(&got[..N_OUT]), bits(&want), "output before the input");
    assert_eq!(bits(&got[N_OUT..]), bits(&data), "the input changed");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn buffers_of_another_context_are_refused() {
    let Some((_context, stream)) = gpu("buffers_of_another_context_are_refused") else { return };
    let data = input();
    let own_input = DeviceBuffer::from_slice(&data).expect("allocate");
    let mut own_output = DeviceBuffer::from_slice(&vec![poison::<f32>(); N_OUT]).expect("allocate");

    // A second context on the same GPU: cuCtxCreate makes it current (pushes it on this thread's
    // stack), so these two buffers are its memory. Popping it makes the stream's context current
    // again.
    let device = Device::get_device(0).expect("device 0");
    let other = LegacyContext::create_and_push(ContextFlags::SCHED_AUTO, device).expect("a second context");
    let foreign_input = DeviceBuffer::from_slice(&data).expect("allocate in the second context");
    let mut foreign_output =
        DeviceBuffer::from_slice(&vec![poison::<f32>(); N_OUT]).expect("allocate in the second context");
    ContextStack::pop().expect("back to the stream's context");

    let err = rc::runtime::launch(&box3::KERNEL, &stream, &[&foreign_input], &mut [&mut own_output], ())
        .expect_err("the input is another context's memory");
    assert!(matches!(err, Error::ForeignBuffer { stencil: "box3", ref buffer, .. } if buffer == "input"), "{err:?}");
    let text = err.to_string();
    assert!(text.starts_with("stencil `box3`: the input buffer (device address 0x"), "{text}");
    assert!(text.contains("expected a buffer the launch's context can reach"), "{text}");

    let err = rc::runtime::launch(&box3::KERNEL, &stream, &[&own_input], &mut [&mut foreign_output], ())
        .expect_err("the output is another context's memory");
    assert!(matches!(err, Error::ForeignBuffer { stencil: "box3", ref buffer, .. } if buffer == "output"), "{err:?}");

    // The launch's own buffers still launch, and nothing was written by the refused launches.
    rc::runtime::launch(&box3::KERNEL, &stream, &[&own_input], &mut [&mut own_output], ()).expect("own buffers");
    stream.synchronize().expect("kernel runs");
    assert_eq!(bits(&host(&own_output)), bits(&reference(&data)));

    // Free the second context's memory in it, then destroy it.
    ContextStack::push(&other).expect("make the second context current");
    assert!(bits(&host(&foreign_output)).iter().all(|&b| b == poison::<f32>().to_bits()), "a refused launch wrote");
    drop(foreign_input);
    drop(foreign_output);
    ContextStack::pop().expect("back to the stream's context");
    drop(other);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn managed_memory_launches() {
    let Some((_context, stream)) = gpu("managed_memory_launches") else { return };
    let data = input();
    // cuMemAllocManaged: the driver reports the current context as its owner, and the GPU
    // reaches it directly. The ownership check must not refuse it.
    let mut managed = UnifiedBuffer::from_slice(&data).expect("allocate managed memory");
    // SAFETY: the managed buffer holds N f32 and outlives the view; it is not touched on the
    // host until the stream is synchronized.
    let input =
        unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(managed.as_unified_ptr().as_raw() as u64), N) };
    let mut output = DeviceBuffer::from_slice(&vec![poison::<f32>(); N_OUT]).expect("allocate");
    rc::runtime::launch(&box3::KERNEL, &stream, &[&input], &mut [&mut output], ()).expect("managed input");
    stream.synchronize().expect("kernel runs");
    assert_eq!(bits(&host(&output)), bits(&reference(&data)));
    drop(managed);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn an_output_overlapping_a_second_input_is_refused_and_one_buffer_may_be_both_inputs() {
    let test = "an_output_overlapping_a_second_input_is_refused_and_one_buffer_may_be_both_inputs";
    let Some((_context, stream)) = gpu(test) else { return };
    let data = input();
    let mut contents = data.clone();
    contents.extend(vec![poison::<f32>(); N]);
    let buffer = DeviceBuffer::from_slice(&contents).expect("allocate");
    let (u, k) = (DeviceBuffer::from_slice(&data).expect("allocate"), buffer.index(0..N));
    // The output starts inside `k`, the second input.
    let mut output = buffer.index(N - 2..2 * N - 4);
    let err = rc::runtime::launch(&product3::KERNEL, &stream, &[&u, &k], &mut [&mut output], ())
        .expect_err("overlaps input 1");
    assert!(matches!(err, Error::Aliasing { stencil: "product3", ref buffer, .. } if buffer == "input 1"), "{err:?}");
    assert!(err.to_string().contains("overlaps the input 1 buffer (device bytes "), "{err}");
    stream.synchronize().expect("nothing queued can fail");
    assert_eq!(bits(&host(&buffer)), bits(&contents), "a refused launch wrote to the buffer");

    // One buffer as both inputs: they are only read, so they may overlap each other.
    let mut output = DeviceBuffer::from_slice(&vec![poison::<f32>(); N_OUT]).expect("allocate");
    rc::runtime::launch(&product3::KERNEL, &stream, &[&u, &u], &mut [&mut output], ()).expect("one buffer, two inputs");
    stream.synchronize().expect("kernel runs");
    let want = product3::KERNEL.reference_vec(&[&data, &data], ()).expect("the CPU reference runs").remove(0);
    assert_eq!(bits(&host(&output)), bits(&want));
}
