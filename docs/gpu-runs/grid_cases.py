"""Runs the 2D/3D kernels rc-core/tests/grid.rs wrote (RC_GRID_CASES=DIR) on the GPU with CuPy and
compares every output bit for bit with the emulation; outputs are poisoned first and guarded by
poisoned elements on both sides. Usage: python3 grid_cases.py DIR"""
import sys, numpy as np, cupy as cp

d = sys.argv[1]
# From case START on (a crash ends the process: the caller restarts after it).
start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
failed = 0
lines = open(f"{d}/index.txt").read().split("\n")
for line in filter(None, lines):
    if int(line.split()[0]) < start:
        continue
    print(f"CASE {line.split()[0]}", file=sys.stderr, flush=True)
    # Bytes of dynamic shared memory per block, then the scalar arguments after the buffers in the
    # kernel's parameter order (lengths, extents, first row, a 2D kernel's prefetch distance), as
    # rc-core's ABI lists them. Outside the rows a launch over a sub-grid computes, `want` holds
    # the poison the output starts with.
    k, shape, out_shape, blocks, threads, what, shared, scalars = line.split()
    shared = int(shared)
    shape = [int(c) for c in shape.split("x")]
    out_shape = [int(c) for c in out_shape.split("x")]
    n = int(np.prod(shape))
    # The test's input: ((i * 7919) % 1013) * 0.125 - 50, exact in f32.
    host_in = (((np.arange(n, dtype=np.int64) * 7919) % 1013).astype(np.float32) * np.float32(0.125) - np.float32(50.0)).astype(np.float32)
    want = np.fromfile(f"{d}/{k}.want", dtype=np.float32)
    guard = 64
    inp = cp.asarray(host_in)
    out_full = cp.full(want.size + 2 * guard, np.float32(np.nan), dtype=np.float32)
    out_full.view(np.uint32)[:] = 0x7FC0DEAD
    # The output starts 16-byte aligned: guard is a multiple of 4 elements.
    out = out_full[guard:guard + want.size]
    mod = cp.RawModule(path=f"{d}/{k}.ptx")
    f = mod.get_function("k")
    if shared:
        f.max_dynamic_shared_size_bytes = shared
    args = [inp, out] + [np.uint64(int(v)) for v in scalars.split(",")]
    f(tuple(int(b) for b in blocks.split(",")), (int(threads),), tuple(args), shared_mem=shared)
    cp.cuda.runtime.deviceSynchronize()
    full = out_full.get().view(np.uint32)
    got = full[guard:guard + want.size]
    ok = np.array_equal(got, want.view(np.uint32)) and np.all(full[:guard] == 0x7FC0DEAD) and np.all(full[guard + want.size:] == 0x7FC0DEAD)
    if not ok:
        failed += 1
        bad = np.nonzero(got != want.view(np.uint32))[0]
        print(f"FAIL {k} {what} shape {shape}: {bad.size} outputs differ, first at {bad[:5]}; guards intact: "
              f"{np.all(full[:guard] == 0x7FC0DEAD) and np.all(full[guard + want.size:] == 0x7FC0DEAD)}")
print(f"{len(list(filter(None, lines)))} cases, {failed} failed")
sys.exit(1 if failed else 0)
