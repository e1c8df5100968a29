// What the 3D staged-plane probes share (staged3d.cu, staged3d2.cu): error checks, the taps of
// a star or box, the naive kernel every probe kernel is checked against bit for bit, and the
// timing (median of 20 launches after 3 warm-ups, CUDA events).
#pragma once
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__host__ __device__ constexpr bool tap(int R, bool star, int dz, int dy, int dx) {
  return !star || ((dz != 0) + (dy != 0) + (dx != 0)) <= 1;
}
__host__ __device__ constexpr int taps(int R, bool star) {
  int n = 0;
  for (int dz = -R; dz <= R; dz++) for (int dy = -R; dy <= R; dy++) for (int dx = -R; dx <= R; dx++) n += tap(R, star, dz, dy, dx);
  return n;
}
__device__ __forceinline__ int clampi(int v, int n) { return min(max(v, 0), n - 1); }

template <int R, bool STAR>
__global__ void naive(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x >= nx) return;
  float acc = 0.0f;
  #pragma unroll
  for (int dz = -R; dz <= R; dz++)
    #pragma unroll
    for (int dy = -R; dy <= R; dy++)
      #pragma unroll
      for (int dx = -R; dx <= R; dx++)
        if (tap(R, STAR, dz, dy, dx)) acc += in[((size_t)clampi(z + dz, nz) * ny + clampi(y + dy, ny)) * nx + clampi(x + dx, nx)];
  out[((size_t)z * ny + y) * nx + x] = acc * (1.0f / taps(R, STAR));
}

template <typename F>
float median_ms(F launch) {
  for (int i = 0; i < 3; i++) launch();
  std::vector<float> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 20; i++) {
    cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return (t[9] + t[10]) / 2;
}

const int N = 512;
float *d_in, *d_out, *d_ref;
double copy_gbs;

// The N^3 input (a fixed pseudo-random sequence in [-0.5, 0.5)) and the copy rate of its bytes.
void setup() {
  size_t bytes = (size_t)N * N * N * 4;
  CHECK(cudaMalloc(&d_in, bytes)); CHECK(cudaMalloc(&d_out, bytes)); CHECK(cudaMalloc(&d_ref, bytes));
  std::vector<float> h((size_t)N * N * N);
  unsigned s = 12345;
  for (auto& v : h) { s = s * 1664525u + 1013904223u; v = (float)(s >> 8) / 16777216.0f - 0.5f; }
  CHECK(cudaMemcpy(d_in, h.data(), bytes, cudaMemcpyHostToDevice));
  float ms = median_ms([&] { cudaMemcpyAsync(d_out, d_in, bytes, cudaMemcpyDeviceToDevice); });
  copy_gbs = 2.0 * bytes / ms / 1e6;
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  printf("%s, 512^3 f32 clamp, copy %.1f GB/s (median of 20 after 3 warm-ups, CUDA events)\n", p.name, copy_gbs);
}

// `launch` once on a poisoned output, compared bit for bit with the naive kernel's: the outputs
// that differ; then its median time.
template <int R, bool STAR, typename L>
std::pair<size_t, float> checked_ms(L launch) {
  size_t bytes = (size_t)N * N * N * 4;
  naive<R, STAR><<<dim3(N / 128, N, N), 128>>>(d_in, d_ref, N, N, N);
  CHECK(cudaMemset(d_out, 0xff, bytes));
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> a((size_t)N * N * N), b((size_t)N * N * N);
  CHECK(cudaMemcpy(a.data(), d_out, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), d_ref, bytes, cudaMemcpyDeviceToHost));
  size_t diff = 0;
  for (size_t i = 0; i < a.size(); i++) diff += a[i] != b[i];
  return {diff, median_ms(launch)};
}
