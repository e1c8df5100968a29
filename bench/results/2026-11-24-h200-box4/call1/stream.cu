// Probe: 2D box r = 4 (9x9, f32, clamp) streamed along y with the 9 pending output rows'
// sums in registers, the loop unrolled by the ring period (9 steps) so no sum moves between
// registers. Sum order per output: rows dy = -4..4, in each dx = -4..4, from 0.0f, then * (1/81),
// rc's body's order (bit-exact). Lane l of a warp computes outputs x0 + 4l .. x0 + 4l + 3 of each
// row of the warp's strip of H rows; its window is 12 elements (3 aligned float4).
// Interior strips (every row and column they read inside): vector loads and stores, row pointers
// moved by the pitch. Other strips: rows clamped, columns clamped element by element at x edges.
#ifndef H
#define H 44            // output rows per warp: 8 + 9 M
#endif
#ifndef WARPS
#define WARPS 8
#endif
#ifndef MB
#define MB 3
#endif
#ifndef P
#define P 4             // outputs per lane along x, one vector of P elements
#endif
#define R 4
#define W (P + 2 * R)   // the lane's window
#define TILE (32 * P)
static_assert((H - 8) % 9 == 0, "H = 8 + 9M");

struct Win { float v[W]; };

struct Ctx {
    const float* in; float* out; int nx, ny, y0, xl, xo;
    const float* pin; float* pout;   // FAST: the next input row at xl, the next output row at xo
    bool vec;                        // GEN: x inside (vector loads and stores)
};

template <bool FAST>
__device__ __forceinline__ Win load_row(Ctx& c, int n) {
    Win w;
    const float* row;
    bool vec = FAST || c.vec;
    if (FAST) { row = c.pin; c.pin += c.nx; }
    else { int y = min(max(c.y0 - R + n, 0), c.ny - 1); row = c.in + (size_t)y * c.nx + c.xl; }
    if (vec) {
#if P == 4
        const float4* p = reinterpret_cast<const float4*>(row);
#pragma unroll
        for (int k = 0; k < W / 4; k++) { float4 a = __ldg(p + k); w.v[4*k] = a.x; w.v[4*k+1] = a.y; w.v[4*k+2] = a.z; w.v[4*k+3] = a.w; }
#else
        const float2* p = reinterpret_cast<const float2*>(row);
#pragma unroll
        for (int k = 0; k < W / 2; k++) { float2 a = __ldg(p + k); w.v[2*k] = a.x; w.v[2*k+1] = a.y; }
#endif
    } else {
        const float* base = row - c.xl;
#pragma unroll
        for (int i = 0; i < W; i++) w.v[i] = __ldg(base + min(max(c.xl + i, 0), c.nx - 1));
    }
    return w;
}

__device__ __forceinline__ void add_row(float (&a)[P], const Win& w, bool first) {
#pragma unroll
    for (int k = 0; k < P; k++) {
        float s = first ? 0.0f : a[k];
#pragma unroll
        for (int dx = 0; dx < 9; dx++) s = __fadd_rn(s, w.v[k + dx]);
        a[k] = s;
    }
}

template <bool FAST>
__device__ __forceinline__ void store_row(Ctx& c, int n, const float (&a)[P]) {
    float r[P];
#pragma unroll
    for (int k = 0; k < P; k++) r[k] = a[k] * (1.0f / 81.0f);
    float* o;
    if (FAST) { o = c.pout; c.pout += c.nx; }
    else {
        int y = c.y0 + n - 8;
        if (y >= c.ny) return;
        o = c.out + (size_t)y * c.nx + c.xo;
    }
    if (FAST || c.vec) {
#if P == 4
        *reinterpret_cast<float4*>(o) = make_float4(r[0], r[1], r[2], r[3]);
#else
        *reinterpret_cast<float2*>(o) = make_float2(r[0], r[1]);
#endif
        return;
    }
#pragma unroll
    for (int k = 0; k < P; k++) if (c.xo + k < c.nx) o[k] = r[k];
}

// Step n of the strip (input row y0 - 4 + n): every pending output row o = n - t (t = 0..8,
// 0 <= o < H) adds it as its box row t; the row t = 8 finishes is stored. PRO: n (< 8) in the
// prologue, else -1; EPI: e for step H + e of the epilogue, else -1.
template <int NMOD, int PRO, int EPI, bool FAST>
__device__ __forceinline__ void step(float (&acc)[9][P], int n, Ctx& c) {
    Win w = load_row<FAST>(c, n);
#pragma unroll
    for (int t = 8; t >= 0; t--) {
        if (PRO >= 0 && PRO - t < 0) continue;
        if (EPI >= 0 && t <= EPI) continue;
        const int slot = ((NMOD - t) % 9 + 9) % 9;
        add_row(acc[slot], w, t == 0);
        if (t == 8) store_row<FAST>(c, n, acc[slot]);
    }
}

template <bool FAST>
__device__ __forceinline__ void strip(Ctx c) {
    float acc[9][P];
    step<0, 0, -1, FAST>(acc, 0, c);
    step<1, 1, -1, FAST>(acc, 1, c);
    step<2, 2, -1, FAST>(acc, 2, c);
    step<3, 3, -1, FAST>(acc, 3, c);
    step<4, 4, -1, FAST>(acc, 4, c);
    step<5, 5, -1, FAST>(acc, 5, c);
    step<6, 6, -1, FAST>(acc, 6, c);
    step<7, 7, -1, FAST>(acc, 7, c);
#pragma unroll 1
    for (int n = 8; n < H; n += 9) {
        step<8, -1, -1, FAST>(acc, n + 0, c);
        step<0, -1, -1, FAST>(acc, n + 1, c);
        step<1, -1, -1, FAST>(acc, n + 2, c);
        step<2, -1, -1, FAST>(acc, n + 3, c);
        step<3, -1, -1, FAST>(acc, n + 4, c);
        step<4, -1, -1, FAST>(acc, n + 5, c);
        step<5, -1, -1, FAST>(acc, n + 6, c);
        step<6, -1, -1, FAST>(acc, n + 7, c);
        step<7, -1, -1, FAST>(acc, n + 8, c);
    }
    step<8, -1, 0, FAST>(acc, H + 0, c);
    step<0, -1, 1, FAST>(acc, H + 1, c);
    step<1, -1, 2, FAST>(acc, H + 2, c);
    step<2, -1, 3, FAST>(acc, H + 3, c);
    step<3, -1, 4, FAST>(acc, H + 4, c);
    step<4, -1, 5, FAST>(acc, H + 5, c);
    step<5, -1, 6, FAST>(acc, H + 6, c);
    step<6, -1, 7, FAST>(acc, H + 7, c);
}

extern "C" __global__ void __launch_bounds__(WARPS * 32, MB)
box4_stream(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int tiles_x = (nx + TILE - 1) / TILE;
    const int tx = blockIdx.x % tiles_x, band = blockIdx.x / tiles_x;
    Ctx c;
    c.in = in; c.out = out; c.nx = nx; c.ny = ny;
    c.y0 = (band * WARPS + w) * H;
    if (c.y0 >= ny) return;
    const int x0 = tx * TILE;
    c.xo = x0 + P * lane; c.xl = c.xo - R;
    c.vec = x0 >= R && x0 + TILE + R <= nx && (nx % P) == 0;
    const bool inside = c.vec && c.y0 >= R && c.y0 + H + R <= ny;
    c.pin = in + (size_t)(c.y0 - R) * nx + c.xl;
    c.pout = out + (size_t)c.y0 * nx + c.xo;
    if (inside) strip<true>(c);
#ifndef FAST_ONLY
    else strip<false>(c);
#endif
}
