// Probe (not rc's code): what separates rc's staged star r = 1 tile (4 warps x 4 rows, 0.72 of
// copy on an H200) from staged3d.cu's of the same shape (0.86). One harness, one input and output
// buffer for both: the probe's kernel with one of rc's habits switched on at a time, and rc's
// printed PTX (loaded as a library, rc's kernel parameters) as printed and as edited.
// Every kernel is checked bit for bit against the naive kernel (those that read past the edges
// on purpose say so) and timed as staged3d.cu times (median of 20 after 3 warm-ups).
// The input has two planes of margin on each side, so the variants without an edge path read
// memory that exists (their edge outputs differ; they measure what the edge path costs).
// Build: nvcc -O3 -arch=sm_90 -std=c++17 staged3d_ab.cu -o staged3d_ab
// Run:   ./staged3d_ab [--once] [--probe-only | --box] [NAME=FILE.ptx[:BLOCKS:THREADS:SHARED] ...]
//        (--once: each kernel launched once, for ncu; --probe-only: the probe without variants;
//        --box: rc's kernels only, each a box r = 1, checked against the naive box)
#include <cstring>
#include <functional>
#include <string>
#include "probe3d.cuh"

// Edge blocks' fetch: the probe's (element by element, each clamped), none (16-byte loads at every
// block, reading past the edges: not exact), or rc's (vector by vector: an outside vector is its
// row's edge element four times).
enum Edge { PROBE_EDGE = 0, NO_EDGE = 1, RC_EDGE = 2 };

template <int R, bool STAR, int RY, int WARPS, int EDGE, bool ROWSTORE, bool EXTRA, int MINB>
__global__ void __launch_bounds__(32 * WARPS, MINB) staged_ab(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zper) {
  constexpr int X = 128, Y = WARPS * RY, SX = X + 8, SY = Y + 2 * R, NP = 2 * R + 1, T = 32 * WARPS;
  constexpr int CHUNKS = SY * (SX / 4), PER = (CHUNKS + T - 1) / T;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x0 = blockIdx.x * X, y0 = blockIdx.y * Y, z0 = blockIdx.z * zper;
  const int zend = min(z0 + zper, nz);
  const bool inside_x = EDGE == NO_EDGE || (x0 >= 4 && x0 + X + 4 <= nx);
  float4 pre[PER];
  auto fetch = [&](int gz) {
    gz = EDGE == NO_EDGE ? gz : clampi(gz, nz);
#pragma unroll
    for (int i = 0; i < PER; i++) {
      int c = threadIdx.x + i * T;
      if (c < CHUNKS) {
        int row = c / (SX / 4), col = c % (SX / 4);
        int gy = EDGE == NO_EDGE ? y0 - R + row : clampi(y0 - R + row, ny);
        const float* p = in + ((long long)gz * ny + gy) * nx;
        int gx = x0 - 4 + 4 * col;
        if (inside_x) pre[i] = __ldg(reinterpret_cast<const float4*>(p + gx));
        else if (EDGE == RC_EDGE) {
          if (gx < 0 || gx >= nx) { float e = __ldg(p + clampi(gx, nx)); pre[i] = make_float4(e, e, e, e); }
          else pre[i] = __ldg(reinterpret_cast<const float4*>(p + gx));
        } else pre[i] = make_float4(p[clampi(gx, nx)], p[clampi(gx + 1, nx)], p[clampi(gx + 2, nx)], p[clampi(gx + 3, nx)]);
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
  const float scale = 1.0f / taps(R, STAR);
  auto store = [&](int o, int j, const float* a) {
    int y = y0 + warp * RY + j, x = x0 + 4 * lane;
    if (y < ny && x < nx) {
      float* p = out + ((long long)o * ny + y) * nx + x;
      if (ROWSTORE)  // now, where it is in the program (as rc prints it)
        asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a[0] * scale), "f"(a[1] * scale), "f"(a[2] * scale), "f"(a[3] * scale) : "memory");
      else *reinterpret_cast<float4*>(p) = make_float4(a[0] * scale, a[1] * scale, a[2] * scale, a[3] * scale);
    }
  };
  for (int g = z0 - R; g < z0 + R; g++) { fetch(g); put((g - z0 + R) % NP); }
  fetch(z0 + R);
  put((2 * R) % NP);
  __syncthreads();
  for (int o = z0; o < zend; o++) {
    if (EXTRA || o + 1 < zend) fetch(o + R + 1);
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
        // Output row yy - 2R is complete after the last plane's row yy.
        if (ROWSTORE && dz == R && yy >= 2 * R) store(o, yy - 2 * R, acc[yy - 2 * R]);
      }
    }
    if (!ROWSTORE)
#pragma unroll
      for (int j = 0; j < RY; j++) store(o, j, acc[j]);
    __syncthreads();
    if (EXTRA || o + 1 < zend) put((o + R + 1 - z0 + R) % NP);
    __syncthreads();
  }
}

struct Variant {
  std::string name;
  bool exact;  // expected bit-exact (the no-edge variants read past the edges on purpose)
  std::function<void()> launch;
};

template <int EDGE, bool ROWSTORE, bool EXTRA, int MINB = 1>
Variant probe(const char* name) {
  constexpr int R = 1, RY = 4, WARPS = 4, Y = WARPS * RY;
  size_t shared = (size_t)(2 * R + 1) * (Y + 2 * R) * 136 * 4;
  auto k = staged_ab<R, true, RY, WARPS, EDGE, ROWSTORE, EXTRA, MINB>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
  dim3 grid(N / 128, N / Y, N / 32);
  return {name, EDGE != NO_EDGE, [=] { k<<<grid, 32 * WARPS, shared>>>(d_in, d_out, N, N, N, 32); }};
}

// rc's printed kernel `k` from FILE: parameters (input, output, n, n_out, in_z, in_y, in_x,
// out_z, out_y, out_x), launched as SPEC says: FILE[:BLOCKS:THREADS:DYNAMIC_SHARED_BYTES] (by
// default 2048 blocks of 128 threads, the 4 x 4 star tile of 512^3, as write_perf's index
// gives them). A name ending in "!" reads past the edges on purpose (not exact).
Variant rc(std::string name, const std::string& spec) {
  bool exact = name.back() != '!';
  std::string file = spec;
  unsigned blocks = 2048, threads = 128, shared = 0;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    file = spec.substr(0, colon);
    if (sscanf(spec.c_str() + colon + 1, "%u:%u:%u", &blocks, &threads, &shared) != 3) { printf("%s: want FILE:BLOCKS:THREADS:SHARED\n", spec.c_str()); exit(1); }
  }
  cudaLibrary_t lib;
  cudaKernel_t f;
  CHECK(cudaLibraryLoadFromFile(&lib, file.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CHECK(cudaLibraryGetKernel(&f, lib, "k"));
  if (shared) CHECK(cudaFuncSetAttribute((const void*)f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
  auto* args = new unsigned long long[10];
  args[0] = (unsigned long long)d_in;
  args[1] = (unsigned long long)d_out;
  args[2] = args[3] = (unsigned long long)N * N * N;
  for (int i = 4; i < 10; i++) args[i] = N;
  auto* params = new void*[10];
  for (int i = 0; i < 10; i++) params[i] = &args[i];
  return {name, exact, [=] { CHECK(cudaLaunchKernel((const void*)f, dim3(blocks), dim3(threads), params, shared, 0)); }};
}

int main(int argc, char** argv) {
  setup();
  // Two planes of margin on each side of the input (its values copied in between).
  size_t plane = (size_t)N * N, bytes = plane * N * 4;
  float* padded;
  CHECK(cudaMalloc(&padded, bytes + 4 * plane * 4));
  CHECK(cudaMemset(padded, 0, bytes + 4 * plane * 4));
  CHECK(cudaMemcpy(padded + 2 * plane, d_in, bytes, cudaMemcpyDeviceToDevice));
  d_in = padded + 2 * plane;
  bool once = false, variants = true, box = false;
  for (int i = 1; i < argc; i++) variants &= strcmp(argv[i], "--probe-only") != 0;
  for (int i = 1; i < argc; i++) box |= strcmp(argv[i], "--box") == 0;
  std::vector<Variant> vs = {
      probe<PROBE_EDGE, false, false>("probe"),
      probe<RC_EDGE, false, false>("probe+rc_edge"),
      probe<PROBE_EDGE, true, false>("probe+row_stores"),
      probe<PROBE_EDGE, false, true>("probe+extra_plane"),
      probe<RC_EDGE, true, true>("probe+all_three"),
      probe<NO_EDGE, false, false>("probe+no_edge!"),
      // Launch bounds of 128 threads and no block count: nvcc 13.5 keeps it to 66 registers.
      probe<PROBE_EDGE, false, false, 0>("probe,bounds(128,0)"),
  };
  if (!variants) vs.resize(1);
  if (box) vs.clear();
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--once")) { once = true; continue; }
    if (!strcmp(argv[i], "--probe-only") || !strcmp(argv[i], "--box")) continue;
    const char* eq = strchr(argv[i], '=');
    if (!eq) { printf("argument %s: want NAME=FILE.ptx[:BLOCKS:THREADS:SHARED], --once, --probe-only or --box\n", argv[i]); return 1; }
    vs.push_back(rc(std::string(argv[i], eq - argv[i]), eq + 1));
  }
  if (once) {
    // For a profiler: each kernel once, in this order.
    for (auto& v : vs) { printf("launch %s\n", v.name.c_str()); fflush(stdout); v.launch(); CHECK(cudaDeviceSynchronize()); }
    return 0;
  }
  for (auto& v : vs) {
    auto [diff, ms] = box ? checked_ms<1, false>(v.launch) : checked_ms<1, true>(v.launch);
    double gbs = 2.0 * bytes / ms / 1e6;
    printf("%-24s %8.1f GB/s %.3f of copy  %zu outputs differ%s\n", v.name.c_str(), gbs, gbs / copy_gbs, diff, v.exact ? (diff ? "  WRONG" : "  (bit-exact)") : "  (reads past the edges: not exact)");
  }
  return 0;
}
