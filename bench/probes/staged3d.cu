// Probe (not rc's code): a 3D stencil tile whose input planes are staged in shared memory, to
// learn what that design reaches before rc builds it. A block of 4 warps computes a 128 x Y
// tile of each output plane and streams along z; the 2R+1 planes an output plane reads sit in a
// ring of shared-memory slots; the next plane is fetched into registers before the current
// plane's taps (its latency hidden by them) and written to the freed slot after. Each thread
// computes 4 consecutive x outputs of RY rows; each output adds its taps in (dz, dy, dx) order,
// as rc's bodies do, so the result is checked bit-exact against a naive kernel of the same order.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 staged3d.cu -o staged3d; run: ./staged3d
#include "probe3d.cuh"

template <int R, bool STAR, int RY, int WARPS, int MINB>
__global__ void __launch_bounds__(32 * WARPS, MINB) staged(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zper) {
  constexpr int X = 128, Y = WARPS * RY, SX = X + 8, SY = Y + 2 * R, NP = 2 * R + 1, T = 32 * WARPS;
  constexpr int CHUNKS = SY * (SX / 4), PER = (CHUNKS + T - 1) / T;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x0 = blockIdx.x * X, y0 = blockIdx.y * Y, z0 = blockIdx.z * zper;
  const int zend = min(z0 + zper, nz);
  const bool inside_x = x0 >= 4 && x0 + X + 4 <= nx;
  float4 pre[PER];
  auto fetch = [&](int gz) {
    gz = clampi(gz, nz);
    #pragma unroll
    for (int i = 0; i < PER; i++) {
      int c = threadIdx.x + i * T;
      if (c < CHUNKS) {
        int row = c / (SX / 4), col = c % (SX / 4);
        const float* p = in + ((size_t)gz * ny + clampi(y0 - R + row, ny)) * nx;
        int gx = x0 - 4 + 4 * col;
        if (inside_x) pre[i] = __ldg(reinterpret_cast<const float4*>(p + gx));
        else pre[i] = make_float4(p[clampi(gx, nx)], p[clampi(gx + 1, nx)], p[clampi(gx + 2, nx)], p[clampi(gx + 3, nx)]);
      }
    }
  };
  auto put = [&](int slot) {
    float4* s = smem4 + slot * (SY * SX / 4);
    #pragma unroll
    for (int i = 0; i < PER; i++) {
      int c = threadIdx.x + i * T;
      if (c < CHUNKS) s[c] = pre[i];
    }
  };
  // Planes z0 - R .. z0 + R - 1 first; plane g lives in slot (g - z0 + R) % NP.
  for (int g = z0 - R; g < z0 + R; g++) { fetch(g); put((g - z0 + R) % NP); }
  fetch(z0 + R);
  put((2 * R) % NP);
  __syncthreads();
  for (int o = z0; o < zend; o++) {
    if (o + 1 < zend) fetch(o + R + 1);
    float acc[RY][4];
    #pragma unroll
    for (int j = 0; j < RY; j++)
      #pragma unroll
      for (int k = 0; k < 4; k++) acc[j][k] = 0.0f;
    #pragma unroll
    for (int dz = -R; dz <= R; dz++) {
      const float* plane = sm + ((o + dz - z0 + R) % NP) * (SY * SX);
      #pragma unroll
      for (int yy = 0; yy < RY + 2 * R; yy++) {
        const float* row = plane + (warp * RY + yy) * SX + 4 * lane;
        float4 a = *reinterpret_cast<const float4*>(row), b = *reinterpret_cast<const float4*>(row + 4), c = *reinterpret_cast<const float4*>(row + 8);
        float v[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
        #pragma unroll
        for (int j = 0; j < RY; j++) {
          const int dy = yy - j - R;
          if (dy < -R || dy > R) continue;
          #pragma unroll
          for (int dx = -R; dx <= R; dx++)
            if (tap(R, STAR, dz, dy, dx))
              #pragma unroll
              for (int k = 0; k < 4; k++) acc[j][k] += v[4 + k + dx];
        }
      }
    }
    const float scale = 1.0f / taps(R, STAR);
    #pragma unroll
    for (int j = 0; j < RY; j++) {
      int y = y0 + warp * RY + j, x = x0 + 4 * lane;
      if (y < ny && x < nx)
        *reinterpret_cast<float4*>(out + ((size_t)o * ny + y) * nx + x) = make_float4(acc[j][0] * scale, acc[j][1] * scale, acc[j][2] * scale, acc[j][3] * scale);
    }
    __syncthreads();
    if (o + 1 < zend) put((o + R + 1 - z0 + R) % NP);
    __syncthreads();
  }
}


// The same tile with the ring filled by cp.async (sm_80+): the next planes are copied from global
// memory straight into free ring slots (AHEAD planes ahead, 2R + 1 + AHEAD slots), so no
// register holds a fetched plane and a step needs one block barrier instead of two.
__device__ __forceinline__ void cp16(float* s, const float* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g));
}
__device__ __forceinline__ void cp4(float* s, const float* g) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;" :: "n"(N)); }

template <int R, bool STAR, int RY, int WARPS, int MINB, int AHEAD>
__global__ void __launch_bounds__(32 * WARPS, MINB) staged_async(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zper) {
  constexpr int X = 128, Y = WARPS * RY, SX = X + 8, SY = Y + 2 * R, NS = 2 * R + 1 + AHEAD, T = 32 * WARPS;
  constexpr int CHUNKS = SY * (SX / 4), PER = (CHUNKS + T - 1) / T;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x0 = blockIdx.x * X, y0 = blockIdx.y * Y, z0 = blockIdx.z * zper;
  const int zend = min(z0 + zper, nz);
  const bool inside_x = x0 >= 4 && x0 + X + 4 <= nx;
  // Plane g lives in slot (g - z0 + R) % NS.
  auto fetch = [&](int g) {
    float* s = sm + ((g - z0 + R) % NS) * (SY * SX);
    int gz = clampi(g, nz);
    #pragma unroll
    for (int i = 0; i < PER; i++) {
      int c = threadIdx.x + i * T;
      if (c < CHUNKS) {
        int row = c / (SX / 4), col = c % (SX / 4);
        const float* p = in + ((size_t)gz * ny + clampi(y0 - R + row, ny)) * nx;
        int gx = x0 - 4 + 4 * col;
        if (inside_x) cp16(s + 4 * c, p + gx);
        else for (int e = 0; e < 4; e++) cp4(s + 4 * c + e, p + clampi(gx + e, nx));
      }
    }
    commit();
  };
  for (int g = z0 - R; g < z0 + R + AHEAD; g++) fetch(g);
  wait_groups<AHEAD - 1>();
  __syncthreads();
  for (int o = z0; o < zend; o++) {
    if (o + AHEAD < zend) fetch(o + R + AHEAD); else commit();
    float acc[RY][4];
    #pragma unroll
    for (int j = 0; j < RY; j++)
      #pragma unroll
      for (int k = 0; k < 4; k++) acc[j][k] = 0.0f;
    #pragma unroll
    for (int dz = -R; dz <= R; dz++) {
      const float* plane = sm + ((o + dz - z0 + R) % NS) * (SY * SX);
      #pragma unroll
      for (int yy = 0; yy < RY + 2 * R; yy++) {
        const float* row = plane + (warp * RY + yy) * SX + 4 * lane;
        float4 a = *reinterpret_cast<const float4*>(row), b = *reinterpret_cast<const float4*>(row + 4), c = *reinterpret_cast<const float4*>(row + 8);
        float v[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
        #pragma unroll
        for (int j = 0; j < RY; j++) {
          const int dy = yy - j - R;
          if (dy < -R || dy > R) continue;
          #pragma unroll
          for (int dx = -R; dx <= R; dx++)
            if (tap(R, STAR, dz, dy, dx))
              #pragma unroll
              for (int k = 0; k < 4; k++) acc[j][k] += v[4 + k + dx];
        }
      }
    }
    const float scale = 1.0f / taps(R, STAR);
    #pragma unroll
    for (int j = 0; j < RY; j++) {
      int y = y0 + warp * RY + j, x = x0 + 4 * lane;
      if (y < ny && x < nx)
        *reinterpret_cast<float4*>(out + ((size_t)o * ny + y) * nx + x) = make_float4(acc[j][0] * scale, acc[j][1] * scale, acc[j][2] * scale, acc[j][3] * scale);
    }
    wait_groups<AHEAD - 1>();
    __syncthreads();
  }
}


// AHEAD 0: planes fetched into registers (two barriers a step); 1, 2: cp.async that many ahead.
template <int R, bool STAR, int RY, int WARPS, int MINB = 1, int AHEAD = 0>
void run(const char* name, int zper) {
  constexpr int Y = WARPS * RY, SX = 136, SY = Y + 2 * R, NP = 2 * R + 1 + AHEAD;
  size_t shared = (size_t)NP * SY * SX * 4;
  auto k = AHEAD ? staged_async<R, STAR, RY, WARPS, MINB, AHEAD ? AHEAD : 1> : staged<R, STAR, RY, WARPS, MINB>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
  dim3 grid(N / 128, (N + Y - 1) / Y, (N + zper - 1) / zper);
  size_t bytes = (size_t)N * N * N * 4;
  auto [diff, ms] = checked_ms<R, STAR>([&] { k<<<grid, 32 * WARPS, shared>>>(d_in, d_out, N, N, N, zper); });
  float ms_naive = median_ms([&] { naive<R, STAR><<<dim3(N / 128, N, N), 128>>>(d_in, d_ref, N, N, N); });
  double gbs = 2.0 * bytes / ms / 1e6, add_bound = 0;
  cudaFuncAttributes attr; cudaFuncGetAttributes(&attr, k);
  int blocks; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 32 * WARPS, shared);
  printf("%-8s ahead=%d RY=%d warps=%d minb=%d zper=%-3d %7.1f GB/s %.3f of copy  naive %.3f  regs %d local %zu shared %zu B blocks/SM %d  %s\n", name, AHEAD, RY, WARPS, MINB, zper, gbs,
         gbs / copy_gbs, 2.0 * bytes / ms_naive / 1e6 / copy_gbs, attr.numRegs, attr.localSizeBytes, shared, blocks, diff ? "DIFFERS" : "bit-exact");
  (void)add_bound;
}

int main(int argc, char**) {
  setup();
  // `staged3d star1`: only the star r = 1 tile of 4 warps x 4 rows (for a profiler).
  if (argc > 1) { run<1, true, 4, 4>("star r1", 32); return 0; }
  run<1, true, 4, 4>("star r1", 32);   run<1, true, 8, 4>("star r1", 32);  run<1, true, 4, 8>("star r1", 32);  run<1, true, 4, 4, 4>("star r1", 32);
  run<1, false, 4, 4>("box r1", 32);   run<1, false, 8, 4>("box r1", 32);  run<1, false, 4, 8>("box r1", 32);  run<1, false, 4, 4, 4>("box r1", 32);
  run<2, true, 4, 4>("star r2", 32);   run<2, true, 8, 4>("star r2", 32);  run<2, true, 4, 8>("star r2", 32);  run<2, true, 2, 8>("star r2", 32);
  run<2, true, 4, 4, 3>("star r2", 32); run<2, true, 4, 4, 4>("star r2", 32); run<2, true, 2, 8, 2>("star r2", 32);
  run<2, false, 4, 4>("box r2", 32);   run<2, false, 8, 4>("box r2", 32);  run<2, false, 4, 8>("box r2", 32);  run<2, false, 2, 8>("box r2", 32);
  run<2, false, 4, 4, 3>("box r2", 32); run<2, false, 4, 4, 4>("box r2", 32); run<2, false, 2, 8, 2>("box r2", 32);
  run<2, true, 4, 4>("star r2", 64);   run<2, false, 4, 4>("box r2", 64);
  // cp.async rings, one and two planes ahead.
  run<1, true, 4, 4, 1, 1>("star r1", 32);  run<1, true, 4, 8, 1, 1>("star r1", 32);  run<1, true, 4, 4, 4, 1>("star r1", 32);  run<1, true, 4, 4, 1, 2>("star r1", 32);  run<1, true, 2, 4, 4, 1>("star r1", 32);
  run<1, false, 4, 4, 1, 1>("box r1", 32);  run<1, false, 4, 8, 1, 1>("box r1", 32);  run<1, false, 4, 4, 4, 1>("box r1", 32);  run<1, false, 4, 4, 1, 2>("box r1", 32);  run<1, false, 4, 4, 3, 1>("box r1", 32);
  run<2, true, 4, 4, 1, 1>("star r2", 32);  run<2, true, 4, 8, 1, 1>("star r2", 32);  run<2, true, 4, 4, 3, 1>("star r2", 32);  run<2, true, 4, 4, 1, 2>("star r2", 32);  run<2, true, 2, 8, 1, 1>("star r2", 32);
  run<2, false, 4, 4, 1, 1>("box r2", 32);  run<2, false, 4, 8, 1, 1>("box r2", 32);  run<2, false, 4, 4, 3, 1>("box r2", 32);  run<2, false, 4, 4, 1, 2>("box r2", 32);  run<2, false, 2, 8, 1, 1>("box r2", 32);
  return 0;
}
