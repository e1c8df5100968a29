"""Times the 2D/3D kernels rc-core/tests/grid.rs wrote (RC_GRID_PERF=DIR) with CUDA events: median
of 20 launches after 3 warm-ups, against a device-to-device copy of the same bytes, CuPy's
ndimage.correlate (mode 'nearest' = rc's clamp) and PyTorch's conv2d/conv3d (on an input padded
beforehand, the padding not timed), all in the same run. Effective bandwidth = (input + output
bytes) / time. Writes DIR/results.csv. Usage: python3 grid_perf.py DIR"""
import sys, itertools, numpy as np, cupy as cp, cupyx.scipy.ndimage as ndi, torch

d = sys.argv[1]

def median_ms(launch, warm=3, timed=20):
    for _ in range(warm):
        launch()
    times = []
    for _ in range(timed):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); launch(); b.record(); b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(times))

def weights(name, dims):
    r = int(name[-1])
    w = np.zeros([2 * r + 1] * dims, dtype=np.float32)
    if name.startswith("box"):
        w[...] = 1
    else:
        for axis in range(dims):
            idx = [r] * dims
            for k in range(2 * r + 1):
                idx[axis] = k
                w[tuple(idx)] = 1
    return w / w.sum()

rows = []
def record(name, impl, ms, n, n_out, copy, regs=""):
    gbs = (n + n_out) * 4 / ms / 1e6
    rows.append((name, impl, f"{ms:.4f}", f"{gbs:.0f}", f"{gbs / copy:.3f}", regs))
    print(f"{name:8s} {impl:48s} {ms:8.3f} ms {gbs:7.0f} GB/s {gbs / copy:.2f} of copy {regs}", flush=True)

copies, done, refs = {}, set(), {}
lines = [l for l in open(f"{d}/index.txt").read().split("\n") if l]
for line in lines:
    # A 7th column (absent in older index files): bytes of dynamic shared memory per block.
    k, shape, out_shape, blocks, threads, what, *dynamic = line.split()
    shared = int(dynamic[0]) if dynamic else 0
    name, impl = what.split("|", 1)
    shape = [int(c) for c in shape.split("x")]
    out_shape = [int(c) for c in out_shape.split("x")]
    n, n_out = int(np.prod(shape)), int(np.prod(out_shape))
    inp = cp.random.RandomState(0).random_sample(n, dtype=cp.float32)
    out = cp.empty(n_out, dtype=cp.float32)
    if n not in copies:
        dst = cp.empty_like(inp)
        ms = median_ms(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, inp.data.ptr, n * 4, 3, 0))
        copies[n] = 2 * n * 4 / ms / 1e6
        rows.append((f"copy{len(shape)}d", "cudaMemcpy device to device", f"{ms:.4f}", f"{copies[n]:.0f}", "1.000", ""))
        print(f"copy {n} elements: {copies[n]:.0f} GB/s", flush=True)
    f = cp.RawModule(path=f"{d}/{k}.ptx").get_function("k")
    if shared:
        f.max_dynamic_shared_size_bytes = shared
    args = tuple([inp, out, np.uint64(n), np.uint64(n_out)] + [np.uint64(c) for c in shape] + [np.uint64(c) for c in out_shape])
    out.fill(float("nan"))
    ms = median_ms(lambda: f((int(blocks),), (int(threads),), args, shared_mem=shared))
    # A sanity check of the timed output against CuPy (another summation order, so a tolerance;
    # bit-exactness is grid_cases.py's and the Rust GPU suites' job).
    if name not in refs:
        refs[name] = ndi.correlate(inp.reshape(shape), cp.asarray(weights(name, len(shape))), mode="nearest")
    ok = bool(cp.allclose(out.reshape(out_shape), refs[name], rtol=1e-4, atol=1e-5))
    record(name, "rc " + impl, ms, n, n_out, copies[n], f"regs {f.num_regs} {'close to cupy' if ok else 'DIFFERS FROM CUPY'}")
    if name not in done:
        done.add(name)
        w = weights(name, len(shape))
        grid = inp.reshape(shape)
        res = cp.empty_like(grid)
        ms = median_ms(lambda: ndi.correlate(grid, cp.asarray(w), output=res, mode="nearest"))
        record(name, "cupy correlate (nearest)", ms, n, n, copies[n])
        r = w.shape[0] // 2
        t = torch.as_tensor(grid, device="cuda")[None, None]
        pad = torch.nn.functional.pad(t, [r] * (2 * len(shape)), mode="replicate")
        kw = torch.as_tensor(w, device="cuda")[None, None]
        conv = torch.nn.functional.conv2d if len(shape) == 2 else torch.nn.functional.conv3d
        torch.backends.cudnn.benchmark = True
        ms = median_ms(lambda: conv(pad, kw))
        record(name, "pytorch conv (padded input)", ms, n, n, copies[n])
        del t, pad
with open(f"{d}/results.csv", "w") as out:
    out.write("stencil,implementation,median_ms,effective_GBps,fraction_of_copy,notes\n")
    for row in rows:
        out.write(",".join(row) + "\n")
