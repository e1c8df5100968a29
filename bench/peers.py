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
"""

import argparse
import datetime
import os
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


def row(**fields):
    return {c: fields.get(c, "") for c in COLUMNS}


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


def numbers(text):
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--type", default="f32", help="f32, f64 or f32,f64 (default f32)")
    parser.add_argument("--n", type=int, help="input length (default 2^28 for f32, 2^27 for f64)")
    parser.add_argument("--radii", type=numbers, default=[1, 2, 4, 8, 12, 16, 24, 32, 64])
    parser.add_argument("--reps", type=int, default=20, help="timed calls; the median is kept")
    parser.add_argument("--warm-up", type=int, default=3, dest="warm_up")
    parser.add_argument("--peers", default="cupy,torch", help="cupy, torch or cupy,torch")
    # target/ is git-ignored: the bench copies the file into its results directory (--peers).
    parser.add_argument("--out", default=os.path.join(repo, "target", "peers.csv"))
    args = parser.parse_args()
    elements = [e.strip() for e in args.type.split(",") if e.strip()]
    for e in elements:
        if e not in DEFAULT_N:
            parser.error(f"--type {e}: expected f32 or f64")
    if args.reps < 1 or args.warm_up < 0:
        parser.error("--reps must be at least 1 and --warm-up at least 0")

    rows = []
    try:
        import numpy as np
    except ImportError as e:
        log(f"peers: numpy is missing ({e}); no peer can run")
        np = None
    makers = {"cupy": CuPyPeer, "torch": TorchPeer}
    wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
    for name in wanted if np is not None else []:
        if name not in makers:
            parser.error(f"--peers {name}: expected cupy or torch")
        try:
            peer = makers[name]()
        except Exception as e:  # ImportError, or a CUDA error when there is no GPU
            log(f"peers: skipping {name}: {type(e).__name__}: {e}")
            continue
        log(f"peers: {peer.name} on {peer.gpu}")
        for element in elements:
            n = args.n or DEFAULT_N[element]
            started = time.time()
            try:
                rows += measure(peer, np, element, n, args.radii, args)
            except Exception as e:  # e.g. out of memory for the input itself
                log(f"peers: {peer.name} {element} failed: {type(e).__name__}: {e}")
            log(f"peers: {peer.name} {element} took {time.time() - started:.0f} s")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(f"# bench/peers.py, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
        f.write(",".join(COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in COLUMNS) + "\n")
    measured = sum(1 for r in rows if r["strategy"] != "peers_copy")
    log(f"peers: wrote {measured} peer rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
