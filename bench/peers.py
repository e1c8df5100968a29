#!/usr/bin/env python3
"""The peers a user would pick instead of rc, on the benchmark's problem and with its method.

Problem: the (2r+1)-tap average B[i] = (A[i] + ... + A[i+2r]) / (2r+1), |B| = n - 2r, through
  - CuPy   cupyx.scipy.ndimage.correlate1d(A, ones(2r+1)/(2r+1), mode='constant'): it writes n
           outputs centred on each input; the valid part out[r : n-r] is B (the ends, which
           depend on the mode, are never compared);
  - PyTorch torch.nn.functional.conv1d(A as (1, 1, n), ones/(2r+1) as (1, 1, 2r+1)), no
           padding: exactly B (conv1d is a cross-correlation). cuDNN picks its fastest algorithm
           (benchmark mode, found during the warm-up); TF32 is off, so f32 is computed in f32.
Method: per peer and radius, a check against a float64 reference on two slices of the output
(first and last 2^20 values; the peers are not bit-exact, so the max relative error is reported),
then warm-up calls, then the median of the timed calls, each between two CUDA events on the
current stream. Per radius, a device-to-device copy of the n input elements is timed the same way
(strategy peers_copy), so this run's memory speed can be compared with the bench's.

Writes a CSV with results.csv's columns (the bench's --peers merges it and fills in the roofline):
strategy = cupy_correlate1d / torch_conv1d / peers_copy; outputs per thread and the kernel
resources are empty. Needs only python3 with numpy, and CuPy and/or PyTorch with a GPU; a peer
that cannot be imported or has no GPU is skipped with a message.

  python3 bench/peers.py [--type f32[,f64]] [--n N] [--radii 1,2,...] [--reps 20] [--warm-up 3]
                         [--peers cupy,torch] [--out target/peers.csv]

With --grid FILE, the grid benchmark's problem instead (bench --grid): 2D and 3D stars and boxes
(examples/bench/grid/kernels.rs), the sum of the taps times 1 / taps, boundary clamp, through
  - CuPy   cupyx.scipy.ndimage.correlate(A, weights, mode='nearest'): 'nearest' is rc's clamp;
  - PyTorch torch.nn.functional.conv2d / conv3d of A padded beforehand by r in each dimension
           with mode 'replicate' (the padding is not timed), weights as (1, 1, 2r+1, ...).
Same method: the first and last 8 rows (2D) or planes (3D) of the output checked against a float64
reference, a copy of the input timed per stencil (peers_copy), then the median of the timed calls.
It writes the columns of the grid's results.csv to FILE:

  python3 bench/peers.py --grid FILE [--stencils star2d_r1,...] [--type f32,f64]
                         [--shape-2d 8192x8192] [--shape-3d 512x512x512] [--reps 20] [--warm-up 3]
"""

import argparse
import datetime
import os
import re
import statistics
import sys
import time

COLUMNS = [
    "strategy", "element", "radius", "outputs_per_thread", "n", "time_ms", "gb_per_s",
    "copy_gb_per_s", "arithmetic_bound_gb_per_s", "roofline_gb_per_s", "fraction_of_roofline",
    "registers", "local_bytes", "shared_bytes", "max_threads_per_block", "blocks_per_sm",
    "occupancy", "shuffles_per_output", "speedup_vs_shared_memory", "max_rel_error", "launches",
    "gpu",
]

GRID_COLUMNS = [
    "stencil", "element", "shape", "taps", "strategy", "kernel", "layout", "outputs_per_thread",
    "rows_per_warp", "planes_per_warp", "min_blocks_per_sm", "time_ms", "gb_per_s",
    "copy_gb_per_s", "arithmetic_bound_gb_per_s", "roofline_gb_per_s", "fraction_of_roofline",
    "registers", "local_bytes", "shared_bytes", "blocks_per_sm", "occupancy",
    "shuffles_per_output", "max_rel_error", "launches", "elements", "gpu",
]
# The grid stencils of each element type, as examples/bench/grid/kernels.rs names them.
GRID_STENCILS = {
    "f32": ["star2d_r1", "box2d_r1", "star2d_r2", "box2d_r2", "star2d_r4", "box2d_r4",
            "star3d_r1", "box3d_r1", "star3d_r2", "box3d_r2"],
    "f64": ["star2d_r1"],
}
GRID_SHAPES = {2: (8192, 8192), 3: (512, 512, 512)}
GRID_CHECK = 8  # output rows (2D) or planes (3D) compared at each end

DEFAULT_N = {"f32": 1 << 28, "f64": 1 << 27}  # 1 GiB of input either way, as the bench
CHECK = 1 << 20  # outputs compared at each end of B
# A sum of up to 65 terms in the element type, normwise: far above rounding, far below a bug.
TOLERANCE = {"f32": 1e-4, "f64": 1e-12}


def log(message):
    print(message, flush=True)


def median_ms(call, warm_up, reps, new_event, elapsed_ms, synchronize):
    """Median time of `call` in ms: `warm_up` untimed calls, then `reps` calls between events."""
    for _ in range(warm_up):
        call()
    events = [(new_event(), new_event()) for _ in range(reps)]
    for start, stop in events:
        start.record()
        call()
        stop.record()
    synchronize()
    return statistics.median(elapsed_ms(start, stop) for start, stop in events)


def signal(np, n, dtype):
    """sin(i / 1000) + 10% uniform noise, in `dtype`, made in chunks to keep the host light."""
    rng = np.random.default_rng(7)
    out = np.empty(n, dtype=dtype)
    chunk = 1 << 24
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        i = np.arange(lo, hi, dtype=np.float64)
        out[lo:hi] = np.sin(i * 1e-3) + 0.1 * rng.uniform(-1.0, 1.0, hi - lo)
    return out


def reference_slices(np, host, radius, n_out):
    """(start, float64 reference) for the first and last CHECK outputs of B."""
    taps = 2 * radius + 1
    m = min(CHECK, n_out)
    slices = []
    for start in sorted({0, n_out - m}):
        a = host[start:start + m + 2 * radius].astype(np.float64)
        slices.append((start, np.convolve(a, np.ones(taps), mode="valid") / taps))
    return slices


def max_rel_error(np, got_at, slices):
    """max |got - ref| / max |ref| over the slices; `got_at(start, m)` gives B[start:start+m]."""
    worst = 0.0
    for start, ref in slices:
        got = np.asarray(got_at(start, len(ref)), dtype=np.float64)
        scale = max(float(np.max(np.abs(ref))), 1e-300)
        worst = max(worst, float(np.max(np.abs(got - ref))) / scale)
    return worst


def row(columns=COLUMNS, **fields):
    return {c: fields.get(c, "") for c in columns}


def gb_per_s(elements, itemsize, ms):
    return elements * itemsize / (ms * 1e-3) / 1e9


class CuPyPeer:
    name = "cupy_correlate1d"

    def __init__(self):
        import cupy  # noqa: F401  (ImportError: skipped by the caller)
        import cupyx.scipy.ndimage  # noqa: F401
        self.cp = cupy
        self.ndimage = cupyx.scipy.ndimage
        cupy.cuda.runtime.getDeviceCount()  # raises without a GPU
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        self.gpu = name.decode() if isinstance(name, bytes) else str(name)

    name_grid = "cupy_correlate"

    def upload(self, host):
        return self.cp.asarray(host)

    def timer(self):
        cp = self.cp
        return dict(
            new_event=cp.cuda.Event,
            elapsed_ms=cp.cuda.get_elapsed_time,
            synchronize=cp.cuda.get_current_stream().synchronize,
        )

    def copy(self, src, dst):
        def call():
            dst.data.copy_from_device_async(src.data, src.nbytes)
        return call

    def prepare(self, a, radius):
        """The call that computes B (into a buffer made once), and how to read B[start:start+m]."""
        cp = self.cp
        taps = 2 * radius + 1
        weights = cp.full(taps, 1.0 / taps, dtype=a.dtype)
        out = cp.empty_like(a)

        def call():
            self.ndimage.correlate1d(a, weights, axis=-1, output=out, mode="constant")

        def got_at(start, m):
            # Output i of correlate1d is centred on input i: B[j] = out[j + r].
            return cp.asnumpy(out[radius + start:radius + start + m])

        return call, got_at, out

    def prepare_grid(self, grid, weights):
        """The call that computes the stencil over `grid` (an array of its shape) with `weights`
        (float64, shape (2r+1,) * dims), and how to read output rows (2D) or planes (3D) lo..hi."""
        cp = self.cp
        w = cp.asarray(weights, dtype=grid.dtype)
        out = cp.empty_like(grid)

        def call():
            self.ndimage.correlate(grid, w, output=out, mode="nearest")

        def got_at(lo, hi):
            return cp.asnumpy(out[lo:hi])

        return call, got_at, out

    def empty_like(self, a):
        return self.cp.empty_like(a)

    def free(self):
        self.cp.get_default_memory_pool().free_all_blocks()


class TorchPeer:
    name = "torch_conv1d"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        self.torch = torch
        torch.backends.cudnn.benchmark = True  # the peer's best algorithm, chosen in the warm-up
        torch.backends.cudnn.allow_tf32 = False  # f32 computed in f32, as rc does
        torch.backends.cuda.matmul.allow_tf32 = False
        self.gpu = torch.cuda.get_device_name(torch.cuda.current_device())

    name_grid = "torch_conv"

    def upload(self, host):
        return self.torch.from_numpy(host).to("cuda")

    def timer(self):
        torch = self.torch
        return dict(
            new_event=lambda: torch.cuda.Event(enable_timing=True),
            elapsed_ms=lambda start, stop: start.elapsed_time(stop),
            synchronize=torch.cuda.synchronize,
        )

    def copy(self, src, dst):
        def call():
            dst.copy_(src)
        return call

    def prepare(self, a, radius):
        torch = self.torch
        taps = 2 * radius + 1
        weights = torch.full((1, 1, taps), 1.0 / taps, dtype=a.dtype, device=a.device)
        x = a.view(1, 1, -1)
        holder = {}

        def call():
            holder["out"] = torch.nn.functional.conv1d(x, weights, padding=0)

        def got_at(start, m):
            return holder["out"].view(-1)[start:start + m].cpu().numpy()

        return call, got_at, holder

    def prepare_grid(self, grid, weights):
        torch = self.torch
        r = weights.shape[0] // 2
        dims = grid.dim()
        w = torch.as_tensor(weights, dtype=grid.dtype, device=grid.device)[None, None]
        # Padded beforehand, outside the timing: conv's own padding is zeros, not clamp.
        padded = torch.nn.functional.pad(grid[None, None], [r] * (2 * dims), mode="replicate")
        conv = torch.nn.functional.conv2d if dims == 2 else torch.nn.functional.conv3d
        holder = {"padded": padded}

        def call():
            holder["out"] = conv(padded, w)

        def got_at(lo, hi):
            return holder["out"][0, 0, lo:hi].cpu().numpy()

        return call, got_at, holder

    def empty_like(self, a):
        return self.torch.empty_like(a)

    def free(self):
        self.torch.cuda.empty_cache()


def measure(peer, np, element, n, radii, args):
    """Rows of one peer for one element type."""
    dtype = {"f32": np.float32, "f64": np.float64}[element]
    itemsize = np.dtype(dtype).itemsize
    log(f"{peer.name} {element}: making the input (n = {n})")
    host = signal(np, n, dtype)
    a = peer.upload(host)
    copy_dst = peer.empty_like(a)
    timer = peer.timer()
    rows = []
    for radius in radii:
        if n < 2 * radius + 1:
            log(f"{peer.name} {element} r={radius}: n = {n} is shorter than one window; skipped")
            continue
        n_out = n - 2 * radius
        copy_ms = median_ms(peer.copy(a, copy_dst), args.warm_up, args.reps, **timer)
        copy_gb = gb_per_s(2 * n, itemsize, copy_ms)
        rows.append(row(strategy="peers_copy", element=element, radius=radius, n=n,
                        time_ms=f"{copy_ms:.6f}", gb_per_s=f"{copy_gb:.1f}",
                        copy_gb_per_s=f"{copy_gb:.1f}", launches=args.reps,
                        gpu=peer.gpu.replace(",", " ")))
        try:
            call, got_at, keep = peer.prepare(a, radius)
            call()
            timer["synchronize"]()
            error = max_rel_error(np, got_at, reference_slices(np, host, radius, n_out))
            if not error <= TOLERANCE[element]:
                log(f"{peer.name} {element} r={radius}: CHECK FAILED: max relative error {error:.3e} "
                    f"> {TOLERANCE[element]:g} against the float64 reference; not timed")
                continue
            ms = median_ms(call, args.warm_up, args.reps, **timer)
        except Exception as e:  # a peer's own failure (out of memory, no algorithm): report, go on
            log(f"{peer.name} {element} r={radius}: failed: {type(e).__name__}: {e}")
            continue
        gb = gb_per_s(n + n_out, itemsize, ms)
        log(f"{peer.name} {element} r={radius}: max rel error {error:.2e}; {ms:.4f} ms, {gb:.1f} GB/s "
            f"(copy {copy_gb:.1f} GB/s, {gb / copy_gb:.3f} of it)")
        rows.append(row(strategy=peer.name, element=element, radius=radius, n=n,
                        time_ms=f"{ms:.6f}", gb_per_s=f"{gb:.1f}", copy_gb_per_s=f"{copy_gb:.1f}",
                        max_rel_error=f"{error:.3e}", launches=args.reps,
                        gpu=peer.gpu.replace(",", " ")))
        del keep, call, got_at
    del a, copy_dst
    peer.free()
    return rows


def grid_stencil(name):
    """(kind, dims, r) of a grid stencil's name, e.g. star2d_r1 -> ("star", 2, 1)."""
    match = re.fullmatch(r"(star|box)([23])d_r([0-9]+)", name)
    if not match:
        raise ValueError(f"not a grid stencil name: {name!r} (expected e.g. star2d_r1, box3d_r2)")
    return match.group(1), int(match.group(2)), int(match.group(3))


def grid_weights(np, kind, dims, r):
    """1 / taps at every tap of the star or box: the sum of the taps times 1 / taps."""
    w = np.zeros([2 * r + 1] * dims, dtype=np.float64)
    if kind == "box":
        w[...] = 1.0
    else:
        for axis in range(dims):
            index = [r] * dims
            for k in range(2 * r + 1):
                index[axis] = k
                w[tuple(index)] = 1.0
    return w / w.sum()


def grid_reference(np, host, weights, lo, hi):
    """float64 outputs lo..hi along the outermost axis of `host` under clamp ('nearest')."""
    r = weights.shape[0] // 2
    start, end = max(0, lo - r), min(host.shape[0], hi + r)
    pad = [(r - (lo - start), (hi + r) - end)] + [(r, r)] * (host.ndim - 1)
    box = np.pad(host[start:end].astype(np.float64), pad, mode="edge")
    out = np.zeros((hi - lo,) + host.shape[1:], dtype=np.float64)
    for offset in zip(*np.nonzero(weights)):
        view = tuple(slice(o, o + n) for o, n in zip(offset, out.shape))
        out += weights[offset] * box[view]
    return out


def measure_grid(peer, np, element, shape, names, host, args):
    """Rows of one peer for the grid stencils `names` of one element type over `host`."""
    itemsize = host.dtype.itemsize
    n = host.size
    shape_text = "x".join(str(c) for c in shape)
    grid = peer.upload(host)
    copy_dst = peer.empty_like(grid)
    timer = peer.timer()
    rows = []
    for name in names:
        kind, dims, r = grid_stencil(name)
        weights = grid_weights(np, kind, dims, r)
        taps = int(np.count_nonzero(weights))
        common = dict(stencil=name, element=element, shape=shape_text, taps=taps, launches=args.reps,
                      elements=n, gpu=peer.gpu.replace(",", " "))
        copy_ms = median_ms(peer.copy(grid, copy_dst), args.warm_up, args.reps, **timer)
        copy_gb = gb_per_s(2 * n, itemsize, copy_ms)
        rows.append(row(GRID_COLUMNS, strategy="peers_copy", time_ms=f"{copy_ms:.6f}", gb_per_s=f"{copy_gb:.1f}",
                        copy_gb_per_s=f"{copy_gb:.1f}", **common))
        try:
            call, got_at, keep = peer.prepare_grid(grid, weights)
            call()
            timer["synchronize"]()
            m = min(GRID_CHECK, shape[0])
            error = 0.0
            for lo in sorted({0, shape[0] - m}):
                ref = grid_reference(np, host, weights, lo, lo + m)
                got = np.asarray(got_at(lo, lo + m), dtype=np.float64)
                error = max(error, float(np.max(np.abs(got - ref))) / max(float(np.max(np.abs(ref))), 1e-300))
            if not error <= TOLERANCE[element]:
                log(f"{peer.name_grid} {name} {element}: CHECK FAILED: max relative error {error:.3e} "
                    f"> {TOLERANCE[element]:g} against the float64 reference; not timed")
                continue
            ms = median_ms(call, args.warm_up, args.reps, **timer)
        except Exception as e:  # a peer's own failure (out of memory, no algorithm): report, go on
            log(f"{peer.name_grid} {name} {element}: failed: {type(e).__name__}: {e}")
            continue
        gb = gb_per_s(2 * n, itemsize, ms)
        log(f"{peer.name_grid} {name} {element} {shape_text}: max rel error {error:.2e}; {ms:.4f} ms, {gb:.1f} GB/s "
            f"(copy {copy_gb:.1f} GB/s, {gb / copy_gb:.3f} of it)")
        rows.append(row(GRID_COLUMNS, strategy=peer.name_grid, time_ms=f"{ms:.6f}", gb_per_s=f"{gb:.1f}",
                        copy_gb_per_s=f"{copy_gb:.1f}", max_rel_error=f"{error:.3e}", **common))
        del keep, call, got_at
    del grid, copy_dst
    peer.free()
    return rows


def shape_arg(dims):
    def parse(text):
        values = [int(v) for v in text.split("x")]
        if len(values) != dims or min(values) < 1:
            raise argparse.ArgumentTypeError(f"expected {dims} positive extents joined by x, got {text!r}")
        return tuple(values)
    return parse


def run_grid(args, np, peers, elements):
    """--grid: every peer over every grid stencil and element type asked for."""
    wanted = [s.strip() for s in args.stencils.split(",")] if args.stencils else None
    rows = []
    for peer in peers:
        for element in elements:
            names = [s for s in GRID_STENCILS[element] if wanted is None or s in wanted]
            dtype = {"f32": np.float32, "f64": np.float64}[element]
            for dims in (2, 3):
                of_dims = [s for s in names if grid_stencil(s)[1] == dims]
                if not of_dims:
                    continue
                shape = args.shape_2d if dims == 2 else args.shape_3d
                started = time.time()
                try:
                    host = signal(np, int(np.prod(shape)), dtype).reshape(shape)
                    rows += measure_grid(peer, np, element, shape, of_dims, host, args)
                except Exception as e:  # e.g. out of memory for the input itself
                    log(f"peers: {peer.name_grid} {element} {dims}D failed: {type(e).__name__}: {e}")
                log(f"peers: {peer.name_grid} {element} {dims}D took {time.time() - started:.0f} s")
    return rows


def numbers(text):
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--type", help="f32, f64 or f32,f64 (default f32; with --grid both)")
    parser.add_argument("--n", type=int, help="input length (default 2^28 for f32, 2^27 for f64)")
    parser.add_argument("--radii", type=numbers, default=[1, 2, 4, 8, 12, 16, 24, 32, 64])
    parser.add_argument("--reps", type=int, default=20, help="timed calls; the median is kept")
    parser.add_argument("--warm-up", type=int, default=3, dest="warm_up")
    parser.add_argument("--peers", default="cupy,torch", help="cupy, torch or cupy,torch")
    # target/ is git-ignored: the bench copies the file into its results directory (--peers).
    parser.add_argument("--out", default=os.path.join(repo, "target", "peers.csv"))
    parser.add_argument("--grid", metavar="FILE", help="the grid benchmark's peers, written to FILE")
    parser.add_argument("--stencils", help="with --grid: which stencils (default all)")
    parser.add_argument("--shape-2d", type=shape_arg(2), default=GRID_SHAPES[2], dest="shape_2d")
    parser.add_argument("--shape-3d", type=shape_arg(3), default=GRID_SHAPES[3], dest="shape_3d")
    args = parser.parse_args()
    elements = [e.strip() for e in (args.type or ("f32,f64" if args.grid else "f32")).split(",") if e.strip()]
    for e in elements:
        if e not in DEFAULT_N:
            parser.error(f"--type {e}: expected f32 or f64")
    if args.reps < 1 or args.warm_up < 0:
        parser.error("--reps must be at least 1 and --warm-up at least 0")
    if args.stencils:
        for name in args.stencils.split(","):
            if not any(name.strip() in names for names in GRID_STENCILS.values()):
                parser.error(f"--stencils {name}: expected one of {', '.join(GRID_STENCILS['f32'])}")

    try:
        import numpy as np
    except ImportError as e:
        log(f"peers: numpy is missing ({e}); no peer can run")
        np = None
    makers = {"cupy": CuPyPeer, "torch": TorchPeer}
    peers = []
    for name in [p.strip() for p in args.peers.split(",") if p.strip()] if np is not None else []:
        if name not in makers:
            parser.error(f"--peers {name}: expected cupy or torch")
        try:
            peer = makers[name]()
        except Exception as e:  # ImportError, or a CUDA error when there is no GPU
            log(f"peers: skipping {name}: {type(e).__name__}: {e}")
            continue
        log(f"peers: {peer.name_grid if args.grid else peer.name} on {peer.gpu}")
        peers.append(peer)

    if args.grid:
        rows, columns, out = run_grid(args, np, peers, elements), GRID_COLUMNS, args.grid
    else:
        rows, columns, out = [], COLUMNS, args.out
        for peer in peers:
            for element in elements:
                n = args.n or DEFAULT_N[element]
                started = time.time()
                try:
                    rows += measure(peer, np, element, n, args.radii, args)
                except Exception as e:  # e.g. out of memory for the input itself
                    log(f"peers: {peer.name} {element} failed: {type(e).__name__}: {e}")
                log(f"peers: {peer.name} {element} took {time.time() - started:.0f} s")

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(f"# bench/peers.py, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in columns) + "\n")
    measured = sum(1 for r in rows if r["strategy"] != "peers_copy")
    log(f"peers: wrote {measured} peer rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
