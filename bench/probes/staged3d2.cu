// Probe (not rc's code), second round: what bounds a 3D tile of staged planes on an H200, and
// which of three changes moves it. The first probe (staged3d.cu) reached 0.87 / 0.67 / 0.74 /
// 0.65 of the roofline for star r1 / box r1 / star r2 / box r2; a count of its L1 data-pipe
// passes (shared-memory wavefronts, plus a global load's and a shared store's pass per fetched
// 16 bytes) gives about 15 passes per 32 outputs for star r1 and 23 for box r1, where the copy
// rate leaves 16: the pipe, not DRAM, is the bound. The variants:
//   VX = 4: as staged3d.cu: 4 outputs per thread, rows of 136 floats, 16-byte lane stride.
//   VX = 8: 8 outputs per thread along x, each 8-element granule followed by 4 floats of
//           padding (48-byte lane stride, odd in 16-byte units: no bank conflicts), so a row
//           of a lane's window is 4 reads for 8 outputs instead of 3 for 4.
//   SIDES:  (VX = 4, R = 1; MODE 2) after the slots each chunk's first and last element again
//           (heads, tails): a lane's halo elements 4l + 3 and 4l + 8 are read from there, lanes
//           4 bytes apart, instead of from the row, lanes 16 bytes apart (4-way bank conflicts).
//   TMA:    (VX = 4) each staged row copied by one cp.async.bulk (the tensor memory accelerator,
//           no LSU pass, no registers), AHEAD planes ahead into 2R + 1 + AHEAD slots, an
//           mbarrier per slot, one block barrier per step; blocks at the x edges fetch through
//           registers as before.
// Each output adds its taps in (dz, dy, dx) order and is checked bit-exact against a naive kernel.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 staged3d2.cu -o staged3d2; run: ./staged3d2 [which]
#include <cstring>
#include <cstdint>
#include "probe3d.cuh"

// A staged row: VX = 4: elements x0 - 4 .. x0 + 132 unpadded; VX = 8: x0 - 8 .. x0 + 264 in
// granules of 8, each followed by 4 floats of padding.
template <int VX> struct Row {
  static constexpr int X = 32 * VX, HALO = VX, E = X + 2 * HALO, CPR = E / 4;
  // Staged 16-byte chunks of a row: VX = 8 leaves out the outer halves of the halo granules.
  static constexpr int C0 = VX == 8 ? 1 : 0, NCH = CPR - 2 * C0;
  static constexpr int SP = VX == 4 ? E : 12 * (E / 8);
  __host__ __device__ static constexpr int chunk(int col) { return VX == 4 ? 4 * col : 12 * (col / 2) + 4 * (col % 2); }
  __host__ __device__ static constexpr int element(int e) { return VX == 4 ? e : 12 * (e / 8) + e % 8; }
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bar_init(uint64_t* b, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(smem_u32(b)), "r"(count));
}
__device__ __forceinline__ void bar_expect(uint64_t* b, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(smem_u32(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_row(float* dst, const float* src, int bytes, uint64_t* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(b)) : "memory");
}
__device__ __forceinline__ void bar_wait(uint64_t* b, int parity) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}" :: "r"(smem_u32(b)), "r"(parity) : "memory");
}

// The taps of output row j (warp rows) of one output plane, read from the ring.
template <int R, bool STAR, int RY, int VX, bool SIDES = false>
__device__ __forceinline__ void compute(const float* sm, int o, int z0, int NS, int SY, int warp, int lane, float (&acc)[RY][VX]) {
  using W = Row<VX>;
  #pragma unroll
  for (int j = 0; j < RY; j++)
    #pragma unroll
    for (int k = 0; k < VX; k++) acc[j][k] = 0.0f;
  #pragma unroll
  for (int dz = -R; dz <= R; dz++) {
    const float* plane = sm + ((o + dz - z0 + R) % NS) * (SY * W::SP);
    #pragma unroll
    for (int yy = 0; yy < RY + 2 * R; yy++) {
      const float* row = plane + (warp * RY + yy) * W::SP;
      // v[i] = element VX * lane + i of the row (the lane's window starts HALO before its outputs).
      float v[3 * VX];
      if (SIDES) {
        // Heads then tails after the NS slots, one float per chunk of each slot's rows.
        const int slot = (o + dz - z0 + R) % NS, chunks = SY * Row<4>::CPR, r = warp * RY + yy;
        const float* heads = sm + NS * SY * W::SP;
        float4 b = *reinterpret_cast<const float4*>(row + 4 * lane + 4);
        v[3] = heads[NS * chunks + slot * chunks + r * Row<4>::CPR + lane];
        v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
        v[8] = heads[slot * chunks + r * Row<4>::CPR + lane + 2];
      } else if (VX == 4) {
        float4 a = *reinterpret_cast<const float4*>(row + 4 * lane), b = *reinterpret_cast<const float4*>(row + 4 * lane + 4), c = *reinterpret_cast<const float4*>(row + 4 * lane + 8);
        float t[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
        #pragma unroll
        for (int i = 0; i < 12; i++) v[i] = t[i];
      } else {
        // Granule lane + 1 holds the outputs; its neighbours' near halves the halo.
        const float* g = row + 12 * lane;
        float4 a = *reinterpret_cast<const float4*>(g + 4), b = *reinterpret_cast<const float4*>(g + 12), c = *reinterpret_cast<const float4*>(g + 16), d = *reinterpret_cast<const float4*>(g + 24);
        float t[16] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w};
        // v[0..4] = elements 8l + 4 .. 8l + 8: the window starts VX = 8 before the outputs, so
        // v[i] = element 8l + i with the first 4 unused.
        #pragma unroll
        for (int i = 0; i < 4; i++) v[i] = 0.0f;
        #pragma unroll
        for (int i = 0; i < 16; i++) v[4 + i] = t[i];
        #pragma unroll
        for (int i = 20; i < 24; i++) v[i] = 0.0f;
      }
      #pragma unroll
      for (int j = 0; j < RY; j++) {
        const int dy = yy - j - R;
        if (dy < -R || dy > R) continue;
        #pragma unroll
        for (int dx = -R; dx <= R; dx++)
          if (tap(R, STAR, dz, dy, dx))
            #pragma unroll
            for (int k = 0; k < VX; k++) acc[j][k] += v[VX + k + dx];
      }
    }
  }
}

template <int R, bool STAR, int RY, int VX>
__device__ __forceinline__ void store(float* out, const float (&acc)[RY][VX], int o, int ny, int nx, int y0, int x0, int warp, int lane) {
  const float scale = 1.0f / taps(R, STAR);
  #pragma unroll
  for (int j = 0; j < RY; j++) {
    int y = y0 + warp * RY + j, x = x0 + VX * lane;
    if (y < ny && x < nx) {
      #pragma unroll
      for (int k = 0; k < VX; k += 4)
        *reinterpret_cast<float4*>(out + ((size_t)o * ny + y) * nx + x + k) = make_float4(acc[j][k] * scale, acc[j][k + 1] * scale, acc[j][k + 2] * scale, acc[j][k + 3] * scale);
    }
  }
}

// MODE 0: planes fetched into registers at a step's start, put into the freed slot after it
// (2R + 1 slots, two barriers a step). MODE 1 (VX = 4): rows copied by cp.async.bulk AHEAD
// planes ahead; blocks at the x edges fetch as MODE 0 does.
template <int R, bool STAR, int RY, int WARPS, int VX, int MODE, int AHEAD, int MINB>
__global__ void __launch_bounds__(32 * WARPS, MINB) staged(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zper) {
  using W = Row<VX>;
  constexpr int Y = WARPS * RY, SY = Y + 2 * R, T = 32 * WARPS, NS = 2 * R + 1 + (MODE == 1 ? AHEAD : 0);
  constexpr int CHUNKS = SY * W::NCH, PER = (CHUNKS + T - 1) / T;
  constexpr bool SIDES = MODE == 2;
  static_assert(!SIDES || (VX == 4 && R == 1), "sides: VX = 4, R = 1");
  extern __shared__ float4 smem4[];
  __shared__ uint64_t bars[MODE == 1 ? NS : 1];
  float* sm = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x0 = blockIdx.x * W::X, y0 = blockIdx.y * Y, z0 = blockIdx.z * zper;
  const int zend = min(z0 + zper, nz);
  const bool inside_x = x0 >= W::HALO && x0 + W::X + W::HALO <= nx;
  if constexpr (MODE == 1) {
    // Each row's part inside the input in one bulk copy; at the x edges the halo chunks
    // outside are filled by threads after it arrives (clamp: the edge element).
    const int lo = max(x0 - W::HALO, 0), hi = min(x0 + W::X + W::HALO, nx);
    if (threadIdx.x == 0)
      for (int s = 0; s < NS; s++) bar_init(&bars[s], 1);
    __syncthreads();
    // Plane g (z0 - R <= g) lives in slot (g - z0 + R) % NS, its k-th use of that slot has parity k & 1.
    auto issue = [&](int g) {
      if (warp != 0) return;
      const int s = (g - z0 + R) % NS;
      if (lane == 0) bar_expect(&bars[s], SY * (hi - lo) * 4);
      __syncwarp();
      const int gz = clampi(g, nz);
      for (int row = lane; row < SY; row += 32)
        bulk_row(sm + (s * SY + row) * W::SP + lo - (x0 - W::HALO), in + ((size_t)gz * ny + clampi(y0 - R + row, ny)) * nx + lo, (hi - lo) * 4, &bars[s]);
    };
    auto wait = [&](int g) {
      const int i = g - z0 + R;
      bar_wait(&bars[i % NS], (i / NS) & 1);
      if (!inside_x) {
        float* slot = sm + (i % NS) * SY * W::SP;
        const int gz = clampi(g, nz);
        for (int row = threadIdx.x; row < SY; row += T) {
          const float* src = in + ((size_t)gz * ny + clampi(y0 - R + row, ny)) * nx;
          for (int e = 0; e < W::E; e++) {
            const int x = x0 - W::HALO + e;
            if (x < 0 || x >= nx) slot[row * W::SP + e] = src[clampi(x, nx)];
          }
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
      }
    };
    for (int g = z0 - R; g < min(z0 + R + AHEAD, zend + R); g++) issue(g);
    for (int g = z0 - R; g < z0 + R; g++) wait(g);
    for (int o = z0; o < zend; o++) {
      if (o + R + AHEAD < zend + R) issue(o + R + AHEAD);
      wait(o + R);
      float acc[RY][VX];
      compute<R, STAR, RY, VX>(sm, o, z0, NS, SY, warp, lane, acc);
      store<R, STAR, RY, VX>(out, acc, o, ny, nx, y0, x0, warp, lane);
      __syncthreads();
    }
  } else {
  // Per round, where the thread's vector of every plane lies: its row's offset (y under the
  // rule) and x, and its place in a slot.
  int off[PER], gxs[PER], put_at[PER];
  #pragma unroll
  for (int i = 0; i < PER; i++) {
    int c = min((int)threadIdx.x + i * T, CHUNKS - 1), row = c / W::NCH, col = c % W::NCH + W::C0;
    gxs[i] = x0 - W::HALO + 4 * col;
    off[i] = clampi(y0 - R + row, ny) * nx + gxs[i];
    put_at[i] = row * W::SP + W::chunk(col);
  }
  float4 pre[PER];
  auto fetch = [&](int g) {
    const float* p = in + (size_t)clampi(g, nz) * ny * nx;
    #pragma unroll
    for (int i = 0; i < PER; i++) {
      if (threadIdx.x + i * T < CHUNKS) {
        if (inside_x || (gxs[i] >= 0 && gxs[i] + 4 <= nx)) pre[i] = __ldg(reinterpret_cast<const float4*>(p + off[i]));
        else {
          const float* q = p + off[i] - gxs[i];
          int gx = gxs[i];
          pre[i] = make_float4(q[clampi(gx, nx)], q[clampi(gx + 1, nx)], q[clampi(gx + 2, nx)], q[clampi(gx + 3, nx)]);
        }
      }
    }
  };
  auto put = [&](int slot) {
    float* s = sm + slot * (SY * W::SP);
    float* heads = sm + NS * SY * W::SP + slot * CHUNKS;
    #pragma unroll
    for (int i = 0; i < PER; i++)
      if (threadIdx.x + i * T < CHUNKS) {
        *reinterpret_cast<float4*>(s + put_at[i]) = pre[i];
        if (SIDES) {
          heads[threadIdx.x + i * T] = pre[i].x;
          heads[NS * CHUNKS + threadIdx.x + i * T] = pre[i].w;
        }
      }
  };
  for (int g = z0 - R; g <= z0 + R; g++) { fetch(g); put((g - z0 + R) % NS); }
  __syncthreads();
  for (int o = z0; o < zend; o++) {
    if (o + 1 < zend) fetch(o + R + 1);
    float acc[RY][VX];
    compute<R, STAR, RY, VX, SIDES>(sm, o, z0, NS, SY, warp, lane, acc);
    store<R, STAR, RY, VX>(out, acc, o, ny, nx, y0, x0, warp, lane);
    __syncthreads();
    if (o + 1 < zend) put((o + R + 1 - z0 + R) % NS);
    __syncthreads();
  }
  }
}

const char* only = nullptr;

template <int R, bool STAR, int RY, int WARPS, int VX, int MODE = 0, int AHEAD = 1, int MINB = 1>
void run(const char* name, int zper = 32) {
  char label[160];
  snprintf(label, sizeof label, "%-7s vx=%d %s ahead=%d RY=%d warps=%d minb=%d zper=%d", name, VX, MODE == 1 ? "tma" : MODE == 2 ? "sides" : "reg", MODE == 1 ? AHEAD : 0, RY, WARPS, MINB, zper);
  if (only && !strstr(label, only)) return;
  using W = Row<VX>;
  constexpr int Y = WARPS * RY, SY = Y + 2 * R, NS = 2 * R + 1 + (MODE == 1 ? AHEAD : 0);
  size_t shared = (size_t)NS * SY * W::SP * 4 + (MODE == 2 ? 2 * NS * SY * W::NCH * 4 : 0);
  if (shared > 227 * 1024) { printf("%s: %zu bytes of shared memory, more than a block may have\n", label, shared); return; }
  auto k = staged<R, STAR, RY, WARPS, VX, MODE, AHEAD, MINB>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
  dim3 grid(N / W::X, (N + Y - 1) / Y, (N + zper - 1) / zper);
  size_t bytes = (size_t)N * N * N * 4;
  auto [diff, ms] = checked_ms<R, STAR>([&] { k<<<grid, 32 * WARPS, shared>>>(d_in, d_out, N, N, N, zper); });
  double gbs = 2.0 * bytes / ms / 1e6;
  cudaFuncAttributes attr; cudaFuncGetAttributes(&attr, k);
  int blocks; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 32 * WARPS, shared);
  printf("%s %7.1f GB/s %.3f of copy  regs %d local %zu shared %zu B blocks/SM %d  %s\n", label, gbs, gbs / copy_gbs, attr.numRegs, attr.localSizeBytes, shared, blocks, diff ? "DIFFERS" : "bit-exact");
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc > 1) only = argv[1];
  setup();
  // Baselines (staged3d.cu's best shapes), then 8 outputs per thread, then bulk copies.
  run<1, true, 4, 4, 4>("star1");  run<1, false, 4, 4, 4, 0, 1, 4>("box1");  run<2, true, 4, 8, 4>("star2");  run<2, false, 4, 8, 4>("box2");
  run<1, true, 4, 4, 8>("star1");  run<1, true, 2, 4, 8>("star1");  run<1, true, 2, 8, 8>("star1");  run<1, true, 4, 2, 8>("star1");  run<1, true, 2, 4, 8, 0, 1, 4>("star1");
  run<1, false, 4, 4, 8>("box1");  run<1, false, 2, 4, 8>("box1");  run<1, false, 2, 8, 8>("box1");  run<1, false, 4, 2, 8>("box1");  run<1, false, 2, 4, 8, 0, 1, 4>("box1");
  run<2, true, 4, 4, 8>("star2");  run<2, true, 2, 8, 8>("star2");  run<2, true, 4, 8, 8>("star2");  run<2, true, 2, 4, 8>("star2");
  run<2, false, 4, 4, 8>("box2");  run<2, false, 2, 8, 8>("box2");  run<2, false, 4, 8, 8>("box2");  run<2, false, 2, 4, 8>("box2");
  run<1, true, 4, 4, 4, 2>("star1");  run<1, true, 2, 4, 4, 2>("star1");  run<1, true, 4, 4, 4, 2, 1, 4>("star1");  run<1, true, 4, 8, 4, 2>("star1");
  run<1, false, 4, 4, 4, 2>("box1");  run<1, false, 2, 4, 4, 2>("box1");  run<1, false, 4, 4, 4, 2, 1, 4>("box1");  run<1, false, 4, 8, 4, 2>("box1");
  run<1, true, 4, 4, 4, 1, 1>("star1");  run<1, true, 4, 4, 4, 1, 2>("star1");  run<1, true, 4, 8, 4, 1, 1>("star1");  run<1, true, 2, 4, 4, 1, 2>("star1");
  run<1, false, 4, 4, 4, 1, 1>("box1");  run<1, false, 4, 4, 4, 1, 2>("box1");  run<1, false, 4, 8, 4, 1, 1>("box1");
  run<2, true, 4, 4, 4, 1, 1>("star2");  run<2, true, 4, 8, 4, 1, 1>("star2");  run<2, true, 4, 4, 4, 1, 2>("star2");
  run<2, false, 4, 4, 4, 1, 1>("box2");  run<2, false, 4, 8, 4, 1, 1>("box2");  run<2, false, 4, 4, 4, 1, 2>("box2");
  return 0;
}
