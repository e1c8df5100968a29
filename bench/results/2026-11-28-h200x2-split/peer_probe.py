# What one halo exchange between GPU 0 and GPU 1 costs on the GPUs, the host's enqueue hidden:
# each measured stream is first held ~300 us by a sleeping kernel while the host queues the rest,
# so the events time only the GPU's work. CUDA events, median of 50.
import cupy as cp, statistics
rt = cp.cuda.runtime
for d, p in [(0, 1), (1, 0)]:
    rt.setDevice(d); rt.deviceEnablePeerAccess(p)
N = 4 << 20
src = r'''extern "C" __global__ void hold(unsigned ns) { for (int i = 0; i < 300; i++) __nanosleep(ns); }
extern "C" __global__ void push(const float4* a, float4* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) b[i] = a[i]; }'''
bufs, streams, mods = {}, {}, {}
for d in (0, 1):
    with cp.cuda.Device(d):
        bufs[d] = cp.zeros(N, cp.uint8); streams[d] = cp.cuda.Stream(non_blocking=True)
        mods[d] = cp.RawModule(code=src)
def hold(d):
    with cp.cuda.Device(d):
        mods[d].get_function("hold")((1,), (32,), (cp.uint32(1000),), stream=streams[d])
def timed(dev, work, reps=50):
    ts = []
    for i in range(reps + 5):
        hold(dev)
        with cp.cuda.Device(dev):
            a, b = cp.cuda.Event(), cp.cuda.Event(); a.record(streams[dev])
        work()
        with cp.cuda.Device(dev):
            b.record(streams[dev]); b.synchronize()
        if i >= 5: ts.append(cp.cuda.get_elapsed_time(a, b) * 1000)
    return statistics.median(ts)
for size in (65536, 1 << 20):
    n = size // 16
    copy = lambda: rt.memcpyPeerAsync(bufs[1].data.ptr, 1, bufs[0].data.ptr, 0, size, streams[1].ptr)
    print(f"{size:8d} B peer copy 0->1 on GPU 1's stream: {timed(1, copy):6.1f} us")
    local = lambda: rt.memcpyAsync(bufs[1].data.ptr + N // 2, bufs[1].data.ptr, size, 3, streams[1].ptr)
    print(f"{size:8d} B copy within GPU 1: {timed(1, local):6.1f} us")
    def waited_copy():
        with cp.cuda.Device(0):
            ev = cp.cuda.Event(disable_timing=True); ev.record(streams[0])
        with cp.cuda.Device(1):
            streams[1].wait_event(ev)
        copy()
    print(f"{size:8d} B GPU 1 waits for an event of GPU 0 (done), then the peer copy: {timed(1, waited_copy):6.1f} us")
    def push():
        with cp.cuda.Device(0):
            mods[0].get_function("push")((min(528, (n + 255) // 256),), (256,), (bufs[0], bufs[1], cp.int32(n)), stream=streams[0])
    print(f"{size:8d} B a kernel on GPU 0 storing it into GPU 1's memory: {timed(0, push):6.1f} us")
    def push_local():
        with cp.cuda.Device(0):
            mods[0].get_function("push")((min(528, (n + 255) // 256),), (256,), (bufs[0], bufs[0][N // 2:], cp.int32(n)), stream=streams[0])
    print(f"{size:8d} B the same kernel storing within GPU 0: {timed(0, push_local):6.1f} us")
