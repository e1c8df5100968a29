"""Where a halo exchange's time goes between two GPUs of one process: what each way of moving
one halo each way between two ranks adds to a round, a round being a ~0.5 ms "step" (a copy of
1 GiB on every GPU, standing in for a stencil step) and then the exchange.

Ways, each for a halo of 64 KiB (a 2D row of 16384 f32) and 1 MiB (a 512 x 512 plane):
  pull-events  what rc's SplitGrid does: `ready` recorded on both streams, each receiver's
               stream waits for the sender's `ready`, cuMemcpyPeerAsync on the receiver's
               stream, `received` recorded after it
  push-events  the sender's stream copies into the receiver's memory (its data is ready in its
               own stream order), the receiver's stream waits for an event after the copy
  pull-kernel  as pull-events, but a kernel on the receiver reads the sender's memory over
               the peer mapping instead of cuMemcpyPeerAsync
  waits-only   pull-events' event records and cross-device waits, no copy
Each way's cost: (its rounds' time - the rounds' time with no exchange) / rounds, by wall
clock over rounds queued back to back (what the GPUs' critical path pays), median of 5 runs.
  usage: python3 exchange_probe.py
"""

import statistics
import time

import cupy
from cupy.cuda import runtime

ROUNDS = 200
STEP_BYTES = 1 << 30

COPY = cupy.RawKernel(
    r"""
extern "C" __global__ void copy_words(unsigned long long from, unsigned long long to, unsigned long long n) {
    const unsigned int* src = (const unsigned int*)from;
    unsigned int* dst = (unsigned int*)to;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) dst[i] = src[i];
}
""",
    "copy_words",
)


class Rank:
    def __init__(self, device: int, halo_bytes: int):
        self.device = device
        with cupy.cuda.Device(device):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.a = cupy.zeros(STEP_BYTES // 4, dtype=cupy.uint32)
            self.b = cupy.zeros(STEP_BYTES // 4, dtype=cupy.uint32)
            self.own = cupy.ones(halo_bytes // 4, dtype=cupy.uint32)
            self.halo = cupy.zeros(halo_bytes // 4, dtype=cupy.uint32)
            self.ready = cupy.cuda.Event(disable_timing=True)
            self.received = cupy.cuda.Event(disable_timing=True)
            self.sent = cupy.cuda.Event(disable_timing=True)

    def step(self):
        with cupy.cuda.Device(self.device):
            runtime.memcpyAsync(self.b.data.ptr, self.a.data.ptr, STEP_BYTES, runtime.memcpyDeviceToDevice, self.stream.ptr)


def exchange(way: str, ranks):
    pairs = [(ranks[0], ranks[1]), (ranks[1], ranks[0])]
    if way == "none":
        return
    if way in ("pull-events", "pull-kernel", "waits-only"):
        for r in ranks:
            with cupy.cuda.Device(r.device):
                r.ready.record(r.stream)
        for sender, receiver in pairs:
            with cupy.cuda.Device(receiver.device):
                receiver.stream.wait_event(sender.ready)
                n = sender.own.size
                if way == "pull-events":
                    runtime.memcpyPeerAsync(receiver.halo.data.ptr, receiver.device, sender.own.data.ptr, sender.device, n * 4, receiver.stream.ptr)
                elif way == "pull-kernel":
                    with receiver.stream:
                        args = (cupy.uint64(sender.own.data.ptr), cupy.uint64(receiver.halo.data.ptr), cupy.uint64(n))
                        COPY(((n + 255) // 256,), (256,), args)
                receiver.received.record(receiver.stream)
    elif way == "push-events":
        for sender, receiver in pairs:
            with cupy.cuda.Device(sender.device):
                n = sender.own.size
                runtime.memcpyPeerAsync(receiver.halo.data.ptr, receiver.device, sender.own.data.ptr, sender.device, n * 4, sender.stream.ptr)
                sender.sent.record(sender.stream)
        for sender, receiver in pairs:
            with cupy.cuda.Device(receiver.device):
                receiver.stream.wait_event(sender.sent)


def rounds_seconds(way: str, ranks) -> float:
    for r in ranks:
        r.stream.synchronize()
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for r in ranks:
            r.step()
        exchange(way, ranks)
    for r in ranks:
        r.stream.synchronize()
    return time.perf_counter() - start


def main() -> None:
    if runtime.getDeviceCount() < 2:
        print("exchange_probe: needs two GPUs")
        return
    for device, peer in ((0, 1), (1, 0)):
        with cupy.cuda.Device(device):
            runtime.deviceEnablePeerAccess(peer)
    for halo in (64 << 10, 1 << 20):
        ranks = [Rank(0, halo), Rank(1, halo)]
        ways = ["none", "waits-only", "pull-events", "push-events", "pull-kernel"]
        times = {way: [] for way in ways}
        for way in ways:
            rounds_seconds(way, ranks)  # warm-up
        for _ in range(5):
            for way in ways:
                times[way].append(rounds_seconds(way, ranks))
        base = statistics.median(times["none"])
        print(f"halo {halo >> 10} KiB each way: a round with no exchange {1e6 * base / ROUNDS:.1f} us")
        for way in ways[1:]:
            extra = (statistics.median(times[way]) - base) / ROUNDS
            print(f"  {way:12s} adds {1e6 * extra:6.1f} us per round")
        ranks[0].halo.fill(0)
        exchange("pull-kernel", ranks)
        for r in ranks:
            r.stream.synchronize()
        assert int(ranks[0].halo.sum()) == ranks[0].halo.size, "the kernel's peer read copied the halo"


if __name__ == "__main__":
    main()
