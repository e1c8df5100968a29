"""Times PTX variants of a 1D fused interior kernel on 2^26 f32 against the device copy, and
checks each variant's output bit for bit against the first (main's PTX)."""
import re, sys, glob, statistics
import numpy as np, cupy as cp
n = 1 << 26
rng = np.random.default_rng(7)
x = np.sin(np.arange(n, dtype=np.float64) * 0.001).astype(np.float32) + rng.standard_normal(n).astype(np.float32) * 0.01
a = cp.asarray(x); b = cp.empty_like(a)
stream = cp.cuda.Stream(non_blocking=True)
def timed(fn, warm=3, reps=20):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream); fn(); e1.record(stream); e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    return statistics.median(ts)
def copy():
    cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, 4 * n, 3, stream.ptr)
rounds = int(sys.argv[1]); files = sys.argv[2:]
copy_ms = timed(copy); copy_bw = 8 * n / (copy_ms * 1e-3) / 1e9
print(f"copy {copy_bw:.1f} GB/s")
mods = {}
for f in files:
    text = open(f).read()
    name = re.search(r'\.visible \.entry (\w+)\(', text).group(1)
    t = int(re.search(r'(\d+) steps per launch', text).group(1))
    per_tile = int(re.search(r'\((\d+) per tile\)', text).group(1))
    mod = cp.RawModule(path=f)
    mods[f] = (mod.get_function(name), t, per_tile)
if rounds == 0:
    # one launch of each, for ncu
    for f in files:
        fn, t, per_tile = mods[f]
        blocks = (n + per_tile - 1) // per_tile
        fn((blocks,), (256,), (a, b, np.uint64(n), np.uint64(n)), stream=stream)
    stream.synchronize(); sys.exit(0)
ref = None
results = {f: [] for f in files}
for r in range(rounds):
    for f in files:
        fn, t, per_tile = mods[f]
        blocks = (n + per_tile - 1) // per_tile
        args = (a, b, np.uint64(n), np.uint64(n))
        launch = lambda: fn((blocks,), (256,), args, stream=stream)
        if r == 0:
            b.fill(0); launch(); stream.synchronize()
            got = cp.asnumpy(b).view(np.uint32)
            if ref is None or not f.split('.')[0] == ref[0]:
                ref = (f.split('.')[0], got)
                same = "reference"
            else:
                d = np.nonzero(got != ref[1])[0]
                same = "bit-exact" if d.size == 0 else f"DIFFERS at {d.size} elements, first {d[0]}"
            print(f"{f}: {same}")
        ms = timed(launch)
        results[f].append(8 * n * t / (ms * 1e-3) / 1e9 / copy_bw)
copy_ms2 = timed(copy); print(f"copy again {8 * n / (copy_ms2 * 1e-3) / 1e9:.1f} GB/s")
for f in files:
    print(f"{f:45s} x copy (interior kernel alone): " + " ".join(f"{v:.3f}" for v in results[f]))
