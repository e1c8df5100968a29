# Peer-copy floor between GPU 0 and GPU 1: cudaMemcpyPeerAsync of one halo (sizes of a 2D row
# pair and a 3D plane), alone and as the split's exchange orders it (record on the sender's
# stream, wait on the receiver's, copy, record), both directions at once; CUDA events, median of 50.
import cupy as cp, statistics
rt = cp.cuda.runtime
for d, p in [(0, 1), (1, 0)]:
    rt.setDevice(d)
    try: rt.deviceEnablePeerAccess(p)
    except Exception as e: print("peer", d, p, e)
bufs, streams = {}, {}
N = 4 << 20
for d in (0, 1):
    with cp.cuda.Device(d):
        bufs[d] = cp.zeros(N, cp.uint8); streams[d] = cp.cuda.Stream(non_blocking=True)
def timed(fn, dev, reps=50):
    ts = []
    for _ in range(5): fn()
    for _ in range(reps):
        with cp.cuda.Device(dev):
            a = cp.cuda.Event(); b = cp.cuda.Event()
            a.record(streams[dev])
        fn()
        with cp.cuda.Device(dev):
            b.record(streams[dev]); b.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, b) * 1000)
    return statistics.median(ts)
for size in (65536, 2 * 65536, 1 << 20, 2 << 20):
    one = lambda: rt.memcpyPeerAsync(bufs[1].data.ptr, 1, bufs[0].data.ptr, 0, size, streams[1].ptr)
    print(f"{size:8d} B peer copy 0->1 on the receiver's stream: {timed(one, 1):7.1f} us")
    def both():
        for dst, src in ((1, 0), (0, 1)):
            with cp.cuda.Device(src):
                ev = cp.cuda.Event(disable_timing=True); ev.record(streams[src])
            with cp.cuda.Device(dst):
                streams[dst].wait_event(ev)
                rt.memcpyPeerAsync(bufs[dst].data.ptr + N // 2, dst, bufs[src].data.ptr, src, size, streams[dst].ptr)
    print(f"{size:8d} B both directions, as the exchange orders them: {timed(both, 1):7.1f} us")
    with cp.cuda.Device(1):
        local = lambda: rt.memcpyAsync(bufs[1].data.ptr + N // 2, bufs[1].data.ptr, size, 3, streams[1].ptr)
        print(f"{size:8d} B copy within GPU 1: {timed(local, 1):7.1f} us")
