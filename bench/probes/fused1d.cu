// Design probe for issue 18's 1D fused time steps on one GPU: which tile shape and schedule
// reach 10x copy (heat r=1) and 4x (9-tap r=4) per step on 2^26 f32.
//
// Each warp owns a tile of 32*K consecutive elements (lane l: K consecutive, 16-byte loads),
// T steps in registers (two per loop iteration), neighbour edges by shuffle, the centre
// 32*K - 2*LEAD stored. Variants: K, T, and PERSIST (grid of resident warps only, each walking
// tiles with a stride of the grid, the next tile's input loaded before the current tile's steps).
// The body's operations in rc's order with explicit rounding (no contraction). Interior tiles
// only are exact (this probe clamps the loads at the domain's ends and applies no rule): the
// check compares outputs at least T*R from each end with a host reference.
//
// Also times rc's own fused kernel from a PTX file (argv[1], entry argv[2], outputs per warp
// argv[3], steps argv[4]) for the same n, as the reference point.
//
// Block tiles (`./fused1d block`): the block's 8 warps own one tile of 256*K consecutive elements;
// each step a warp's lanes 0 and 31 swap their edges with the neighbour warps through shared
// memory (two buffers by step parity, one barrier per step), so only the block's two ends lose
// T*R elements, not every warp's.
//
// nvcc -O3 -arch=sm_90 -o fused1d fused1d.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* s; cuGetErrorString(e, &s); printf("%s: %s\n", #x, s); exit(1); } } while (0)

struct Heat {
    static constexpr int R = 1;
    __host__ __device__ static float at(const float* w) {  // w[-1], w[0], w[1] at w - 1, w, w + 1
#ifdef __CUDA_ARCH__
        return __fadd_rn(w[0], __fmul_rn(0.25f, __fadd_rn(__fsub_rn(w[-1], __fmul_rn(2.0f, w[0])), w[1])));
#else
        volatile float a = w[-1] - 2.0f * w[0];
        volatile float b = a + w[1];
        volatile float c = 0.25f * b;
        return w[0] + c;
#endif
    }
};

struct Nine {
    static constexpr int R = 4;
    __host__ __device__ static float at(const float* w) {
        const float c[9] = {0.02f, 0.05f, 0.1f, 0.15f, 0.36f, 0.15f, 0.1f, 0.05f, 0.02f};
#ifdef __CUDA_ARCH__
        float s = __fmul_rn(c[0], w[-4]);
#pragma unroll
        for (int d = 1; d < 9; d++) s = __fadd_rn(s, __fmul_rn(c[d], w[d - 4]));
        return s;
#else
        volatile float s = c[0] * w[-4];
        for (int d = 1; d < 9; d++) { volatile float p = c[d] * w[d - 4]; s = s + p; }
        return s;
#endif
    }
};

template <int K, int T, int R>
struct Shape {
    static constexpr int HALO = T * R;
    static constexpr int LEAD = (HALO + 3) / 4 * 4;
    static constexpr int OUT = 32 * K - 2 * LEAD;
};

// The lane's K elements from input index `mine` into v: vectors if the whole tile lies inside.
template <int K>
__device__ __forceinline__ void load_lane(float (&v)[K], const float* in, long n, long mine, bool inside) {
    if (inside) {
        const float4* p = reinterpret_cast<const float4*>(in + mine);
#pragma unroll
        for (int c = 0; c < K / 4; c++) {
            float4 x = __ldg(p + c);
            v[4 * c] = x.x; v[4 * c + 1] = x.y; v[4 * c + 2] = x.z; v[4 * c + 3] = x.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < K; j++) v[j] = in[min(max(mine + j, 0L), n - 1)];
    }
}

// The lane's K elements of warp tile `tile` into v.
template <int K, int T, int R>
__device__ __forceinline__ void load(float (&v)[K], const float* in, long n, long tile, int lane) {
    using S = Shape<K, T, R>;
    long first = tile * S::OUT - S::LEAD;
    load_lane<K>(v, in, n, first + (long)lane * K, first >= 0 && first + 32 * K <= n);
}

template <class B, int K>
__device__ __forceinline__ void step(const float (&s)[K], float (&t)[K]) {
    constexpr int R = B::R;
    float w[K + 2 * R];
#pragma unroll
    for (int i = 0; i < R; i++) {
        w[i] = __shfl_up_sync(0xffffffffu, s[K - R + i], 1);
        w[K + R + i] = __shfl_down_sync(0xffffffffu, s[i], 1);
    }
#pragma unroll
    for (int j = 0; j < K; j++) w[R + j] = s[j];
#pragma unroll
    for (int j = 0; j < K; j++) t[j] = B::at(&w[R + j]);
}

template <class B, int K, int T, bool PERSIST>
__global__ void __launch_bounds__(256) fused(const float* __restrict__ in, float* __restrict__ out, long n, long tiles) {
    using S = Shape<K, T, B::R>;
    int lane = threadIdx.x & 31;
    long warp = ((long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long stride = PERSIST ? ((long)gridDim.x * blockDim.x) >> 5 : tiles;
    float next[K];
    if (warp < tiles) load<K, T, B::R>(next, in, n, warp, lane);
    for (long tile = warp; tile < tiles; tile += stride) {
        float s[K];
#pragma unroll
        for (int j = 0; j < K; j++) s[j] = next[j];
        if (PERSIST && tile + stride < tiles) load<K, T, B::R>(next, in, n, tile + stride, lane);
#pragma unroll 1
        for (int i = 0; i < T / 2; i++) {
            float m[K];
            step<B, K>(s, m);
            step<B, K>(m, s);
        }
        if (T % 2) {
            float m[K];
            step<B, K>(s, m);
#pragma unroll
            for (int j = 0; j < K; j++) s[j] = m[j];
        }
        long first = tile * S::OUT - S::LEAD + (long)lane * K;
#pragma unroll
        for (int c = 0; c < K / 4; c++) {
            int o = lane * K + 4 * c - S::LEAD;
            long g = first + 4 * c;
            if (o >= 0 && o < S::OUT) {
                if (g + 4 <= n) {
                    *reinterpret_cast<float4*>(out + g) = make_float4(s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]);
                } else {
                    for (int e = 0; e < 4; e++) if (g + e < n) out[g + e] = s[4 * c + e];
                }
            }
        }
    }
}

// One step of a block tile: shuffles inside the warp, shared memory across warps (buffer P).
template <class B, int K, int P>
__device__ __forceinline__ void block_step(const float (&s)[K], float (&t)[K], float (*ex)[8][2][B::R], int lane, int w) {
    constexpr int R = B::R;
    float v[K + 2 * R];
#pragma unroll
    for (int i = 0; i < R; i++) {
        v[i] = __shfl_up_sync(0xffffffffu, s[K - R + i], 1);
        v[K + R + i] = __shfl_down_sync(0xffffffffu, s[i], 1);
    }
    if (lane == 31) {
#pragma unroll
        for (int i = 0; i < R; i++) ex[P][w][1][i] = s[K - R + i];
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < R; i++) ex[P][w][0][i] = s[i];
    }
    __syncthreads();
    if (lane == 0 && w > 0) {
#pragma unroll
        for (int i = 0; i < R; i++) v[i] = ex[P][w - 1][1][i];
    }
    if (lane == 31 && w < 7) {
#pragma unroll
        for (int i = 0; i < R; i++) v[K + R + i] = ex[P][w + 1][0][i];
    }
#pragma unroll
    for (int j = 0; j < K; j++) v[R + j] = s[j];
#pragma unroll
    for (int j = 0; j < K; j++) t[j] = B::at(&v[R + j]);
}

template <int K, int T, int R>
struct BlockShape {
    static constexpr int LEAD = (T * R + 3) / 4 * 4;
    static constexpr int OUT = 256 * K - 2 * LEAD;
};

template <class B, int K, int T>
__global__ void __launch_bounds__(256) block_fused(const float* __restrict__ in, float* __restrict__ out, long n) {
    using S = BlockShape<K, T, B::R>;
    __shared__ float ex[2][8][2][B::R];
    int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    long first = (long)blockIdx.x * S::OUT - S::LEAD;
    long mine = first + (long)tid * K;
    float s[K];
    load_lane<K>(s, in, n, mine, first >= 0 && first + 256 * K <= n);
#pragma unroll 1
    for (int i = 0; i < T / 2; i++) {
        float m[K];
        block_step<B, K, 0>(s, m, ex, lane, w);
        block_step<B, K, 1>(m, s, ex, lane, w);
    }
#pragma unroll
    for (int c = 0; c < K / 4; c++) {
        int o = tid * K + 4 * c - S::LEAD;
        long g = mine + 4 * c;
        if (o >= 0 && o < S::OUT) {
            if (g + 4 <= n) {
                *reinterpret_cast<float4*>(out + g) = make_float4(s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]);
            } else {
                for (int e = 0; e < 4; e++) if (g + e < n) out[g + e] = s[4 * c + e];
            }
        }
    }
}

// Persistent block tiles (`./fused1d persist`): a grid of resident blocks only, each walking
// tiles with a stride of the grid. Each thread copies its own K input elements of the next tile
// into its own region of a shared-memory stage with cp.async while the current tile steps, so no
// barrier guards the stage: the thread reads its region into registers, then issues the next
// copy into it. Tiles that reach past the input's ends load element by element (clamped).
template <class B, int K, int T>
__global__ void __launch_bounds__(256) block_persist(const float* __restrict__ in, float* __restrict__ out, long n, long tiles) {
    using S = BlockShape<K, T, B::R>;
    extern __shared__ float4 stage[];
    __shared__ float ex[2][8][2][B::R];
    int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    float4* own = stage + tid * (K / 4);
    unsigned own_at = (unsigned)__cvta_generic_to_shared(own);
    auto inside = [&](long tile) { long first = tile * S::OUT - S::LEAD; return first >= 0 && first + 256 * K <= n; };
    auto prefetch = [&](long tile) {
        const float* src = in + tile * S::OUT - S::LEAD + (long)tid * K;
#pragma unroll
        for (int c = 0; c < K / 4; c++) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(own_at + 16 * c), "l"(src + 4 * c) : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
    long tile = blockIdx.x;
    if (tile < tiles && inside(tile)) prefetch(tile);
    for (; tile < tiles; tile += gridDim.x) {
        long first = tile * S::OUT - S::LEAD;
        long mine = first + (long)tid * K;
        float s[K];
        if (inside(tile)) {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
            for (int c = 0; c < K / 4; c++) {
                float4 x = own[c];
                s[4 * c] = x.x; s[4 * c + 1] = x.y; s[4 * c + 2] = x.z; s[4 * c + 3] = x.w;
            }
        } else {
            load_lane<K>(s, in, n, mine, false);
        }
        long next = tile + gridDim.x;
        if (next < tiles && inside(next)) prefetch(next);
#pragma unroll 1
        for (int i = 0; i < T / 2; i++) {
            float m[K];
            block_step<B, K, 0>(s, m, ex, lane, w);
            block_step<B, K, 1>(m, s, ex, lane, w);
        }
#pragma unroll
        for (int c = 0; c < K / 4; c++) {
            int o = tid * K + 4 * c - S::LEAD;
            long g = mine + 4 * c;
            if (o >= 0 && o < S::OUT) {
                if (g + 4 <= n) {
                    *reinterpret_cast<float4*>(out + g) = make_float4(s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]);
                } else {
                    for (int e = 0; e < 4; e++) if (g + e < n) out[g + e] = s[4 * c + e];
                }
            }
        }
    }
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F>
static float time_ms(F f, int warm = 3, int timed = 20) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < warm; i++) f();
    std::vector<float> ms;
    for (int i = 0; i < timed; i++) {
        CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
    }
    CK(cudaGetLastError());
    return median(ms);
}

static long N = 1L << 26;
static float *d_in, *d_out;
static double copy_gbs;
static std::vector<float> host_in;

template <class B>
static std::vector<float> reference(long n, int steps) {
    std::vector<float> a(host_in.begin(), host_in.begin() + n), b(n);
    for (int s = 0; s < steps; s++) {
        for (long i = B::R; i < n - B::R; i++) b[i] = B::at(&a[i]);
        std::swap(a, b);
    }
    return a;
}

// Checks `launch` (interior outputs equal T host steps on 2^20 elements), times it on N and
// prints one row.
template <class B, int K, int T, class Launch>
static void check_and_time(const char* name, const char* kind, int regs, int per_sm, double useful, Launch launch, long tn = N) {
    long cn = 1 << 20;
    launch(cn);
    CK(cudaDeviceSynchronize());
    std::vector<float> got(cn);
    CK(cudaMemcpy(got.data(), d_out, cn * 4, cudaMemcpyDeviceToHost));
    auto want = reference<B>(cn, T);
    long bad = 0;
    for (long i = T * B::R; i < cn - T * B::R; i++) bad += memcmp(&got[i], &want[i], 4) != 0;
    float ms = time_ms([&] { launch(tn); });
    double gbs = 8.0 * tn / (ms * 1e-3 / T) / 1e9;
    printf("%-14s K=%2d T=%2d %-8s regs %3d  %2d blocks/SM  useful %.3f  %8.1f GB/s  %6.2fx copy  %s\n", name, K, T, kind, regs,
           per_sm, useful, gbs, gbs / copy_gbs, bad ? "MISMATCH" : "exact");
}

template <class B, int K, int T, bool PERSIST>
static void variant(const char* name) {
    using S = Shape<K, T, B::R>;
    auto kernel = fused<B, K, T, PERSIST>;
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kernel));
    auto launch = [&](long n) {
        long tiles = (n + S::OUT - 1) / S::OUT;
        long warps = PERSIST ? std::min(tiles, (long)per_sm * sms * 8) : tiles;
        long blocks = (warps * 32 + 255) / 256;
        kernel<<<blocks, 256>>>(d_in, d_out, n, tiles);
    };
    check_and_time<B, K, T>(name, PERSIST ? "persist" : "one", attr.numRegs, per_sm, double(S::OUT) / (32 * K), launch);
}

template <class B, int K, int T>
static void block_variant(const char* name, long tn = N) {
    using S = BlockShape<K, T, B::R>;
    auto kernel = block_fused<B, K, T>;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kernel));
    auto launch = [&](long n) { kernel<<<(n + S::OUT - 1) / S::OUT, 256>>>(d_in, d_out, n); };
    check_and_time<B, K, T>(name, tn == N ? "block" : "blk-even", attr.numRegs, per_sm, double(S::OUT) / (256 * K), launch, tn);
}

// The length of `waves` whole waves of block tiles (every SM's blocks busy to the last wave).
template <class B, int K, int T>
static long whole_waves(int waves) {
    using S = BlockShape<K, T, B::R>;
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, block_fused<B, K, T>, 256, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return (long)waves * per_sm * sms * S::OUT;
}

template <class B, int K, int T>
static void persist_variant(const char* name, long tn = N) {
    using S = BlockShape<K, T, B::R>;
    auto kernel = block_persist<B, K, T>;
    int bytes = 256 * K * 4, per_sm = 0, sms = 0;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, bytes));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kernel));
    auto launch = [&](long n) {
        long tiles = (n + S::OUT - 1) / S::OUT;
        // The check (n < tn) runs 16 blocks, so every block walks several tiles.
        kernel<<<std::min(tiles, n < tn ? 16L : (long)per_sm * sms), 256, bytes>>>(d_in, d_out, n, tiles);
    };
    check_and_time<B, K, T>(name, tn == N ? "persist" : "per-even", attr.numRegs, per_sm, double(S::OUT) / (256 * K), launch, tn);
}

int main(int argc, char** argv) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int khz = 0;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    printf("device: %s, %d SMs, %d MHz\n", p.name, p.multiProcessorCount, khz / 1000);
    host_in.resize(N);
    for (long i = 0; i < N; i++) host_in[i] = std::sin(0.001f * i) + 0.01f * ((i * 2654435761u) % 1000) / 1000.0f;
    CK(cudaMalloc(&d_in, N * 4)); CK(cudaMalloc(&d_out, N * 4));
    CK(cudaMemcpy(d_in, host_in.data(), N * 4, cudaMemcpyHostToDevice));
    float cms = time_ms([&] { CK(cudaMemcpyAsync(d_out, d_in, N * 4, cudaMemcpyDeviceToDevice)); });
    copy_gbs = 8.0 * N / (cms * 1e-3) / 1e9;
    printf("copy %.1f GB/s (n = 2^26 f32, 8 bytes per element)\n", copy_gbs);
    if (argc > 1 && strcmp(argv[1], "block") == 0) {
        variant<Heat, 16, 32, false>("heat");
        block_variant<Heat, 16, 32>("heat");
        block_variant<Heat, 16, 48>("heat");
        block_variant<Heat, 16, 64>("heat");
        block_variant<Heat, 16, 96>("heat");
        block_variant<Heat, 8, 64>("heat");
        block_variant<Heat, 12, 64>("heat");
        block_variant<Heat, 20, 64>("heat");
        variant<Nine, 32, 16, false>("nine");
        block_variant<Nine, 32, 16>("nine");
        block_variant<Nine, 32, 32>("nine");
        block_variant<Nine, 16, 16>("nine");
        block_variant<Nine, 16, 32>("nine");
        block_variant<Nine, 20, 32>("nine");
        block_variant<Nine, 24, 32>("nine");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "tiles") == 0) {
        // rc's default 1D block tiles, as a reference beside rc's kernels in the same run.
        block_variant<Nine, 56, 58>("nine");
        block_variant<Heat, 20, 124>("heat");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "persist") == 0) {
        // 9-tap at rc's tile (56 per lane) and degrees around rc's 58; heat at rc's 20 per lane.
        block_variant<Nine, 56, 58>("nine");
        persist_variant<Nine, 56, 58>("nine");
        block_variant<Nine, 56, 58>("nine", whole_waves<Nine, 56, 58>(12));
        persist_variant<Nine, 56, 58>("nine", whole_waves<Nine, 56, 58>(12));
        block_variant<Nine, 56, 32>("nine");
        persist_variant<Nine, 56, 32>("nine");
        persist_variant<Nine, 56, 24>("nine");
        persist_variant<Nine, 56, 40>("nine");
        persist_variant<Nine, 56, 80>("nine");
        block_variant<Nine, 48, 32>("nine");
        persist_variant<Nine, 48, 32>("nine");
        persist_variant<Nine, 48, 48>("nine");
        block_variant<Heat, 20, 124>("heat");
        persist_variant<Heat, 20, 124>("heat");
        persist_variant<Heat, 20, 64>("heat");
        persist_variant<Heat, 20, 96>("heat");
        persist_variant<Heat, 24, 96>("heat");
        return 0;
    }
    bool only_rc = argc > 5;
    if (argc > 4) {
        CU(cuInit(0));
        CUmodule mod; CUfunction f;
        CU(cuModuleLoad(&mod, argv[1]));
        CU(cuModuleGetFunction(&f, mod, argv[2]));
        long outs = atol(argv[3]); int steps = atoi(argv[4]);
        unsigned long long n = N, n_out = N;
        void* args[] = {&d_in, &d_out, &n, &n_out};
        long warps = (N + outs - 1) / outs;
        unsigned blocks = (warps * 32 + 255) / 256;
        int regs; CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
        float ms = time_ms([&] { CU(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, 0, args, 0)); });
        double gbs = 8.0 * N / (ms * 1e-3 / steps) / 1e9;
        printf("rc %-11s T=%2d regs %3d  %8.1f GB/s  %6.2fx copy\n", argv[2], steps, regs, gbs, gbs / copy_gbs);
    }
    if (only_rc) return 0;
    variant<Heat, 8, 16, false>("heat");
    variant<Heat, 8, 16, true>("heat");
    variant<Heat, 16, 16, false>("heat");
    variant<Heat, 16, 16, true>("heat");
    variant<Heat, 16, 24, true>("heat");
    variant<Heat, 16, 32, true>("heat");
    variant<Heat, 24, 16, true>("heat");
    variant<Heat, 32, 16, false>("heat");
    variant<Heat, 32, 16, true>("heat");
    variant<Heat, 32, 24, true>("heat");
    variant<Heat, 32, 32, true>("heat");
    variant<Nine, 32, 16, false>("nine");
    variant<Nine, 32, 16, true>("nine");
    variant<Nine, 32, 12, true>("nine");
    variant<Nine, 32, 8, true>("nine");
    variant<Nine, 24, 8, true>("nine");
    variant<Nine, 16, 8, true>("nine");
    variant<Nine, 16, 4, true>("nine");
    return 0;
}
