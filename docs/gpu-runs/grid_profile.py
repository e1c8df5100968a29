"""Launches chosen 2D/3D kernels that rc-core/tests/grid.rs wrote (RC_GRID_PERF=DIR) once each
after one warm-up, for ncu to profile: `ncu --set full -k k python3 grid_profile.py DIR N...`
(N: index numbers of DIR/index.txt; the kernel of each file is named `k`)."""
import sys, numpy as np, cupy as cp

d, picks = sys.argv[1], set(sys.argv[2:])
for line in open(f"{d}/index.txt").read().split("\n"):
    if not line or line.split()[0] not in picks:
        continue
    # A 7th column (absent in older index files): bytes of dynamic shared memory per block.
    k, shape, out_shape, blocks, threads, what, *dynamic = line.split()
    shared = int(dynamic[0]) if dynamic else 0
    shape = [int(c) for c in shape.split("x")]
    out_shape = [int(c) for c in out_shape.split("x")]
    n, n_out = int(np.prod(shape)), int(np.prod(out_shape))
    inp = cp.random.RandomState(0).random_sample(n, dtype=cp.float32)
    out = cp.empty(n_out, dtype=cp.float32)
    f = cp.RawModule(path=f"{d}/{k}.ptx").get_function("k")
    if shared:
        f.max_dynamic_shared_size_bytes = shared
    args = tuple([inp, out, np.uint64(n), np.uint64(n_out)] + [np.uint64(c) for c in shape] + [np.uint64(c) for c in out_shape])
    for _ in range(2):
        f((int(blocks),), (int(threads),), args, shared_mem=shared)
    cp.cuda.Device().synchronize()
    print(k, what, flush=True)
