#!/usr/bin/env bash
# 2026-11-24: main after merging several input fields, integer operations and array parameters,
# the grid benchmark and explain() for 2D/3D, and the cost model's two-block launch bounds for
# 2D/3D tiles, on a GPU.
# Carried in .device-run/: test binaries (cargo test --release --features cudarc --no-run: gpu,
# gpu_grid, gpu_misuse, cudarc, fields, grid_methods) and examples (laplace3d heat2d blur
# quickstart heat diffusion explain, bench gzipped) built without CUDA and stripped; cases.tgz
# and perf.tgz from `RC_GRID_CASES=DIR RC_GRID_PERF=DIR cargo test --release -p rc-core --test
# grid write_`; grid_cases.py and grid_perf.py from docs/gpu-runs/.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT suite|perf|grid-bench|extras
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
root=$(pwd)
cd .device-run
# Binaries travel gzipped (the carry limit); unpack what is there.
for f in tests/*.gz examples/*.gz; do [ -e "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
case "${1:?suite, perf, grid-bench or extras}" in
suite)
  tar xzf cases.tgz
  # 421 printed 2D/3D kernels (default tiles now with two-block launch bounds) bit for bit
  # against the emulation.
  step python3 grid_cases.py cases
  # Through the macro and the runtime: the grid catalogue (several fields, array parameters,
  # integer operations among it) over every shape, a grid of more than 2^31 elements, methods.
  step tests/test-gpu_grid --include-ignored --nocapture
  step tests/test-grid_methods --include-ignored --nocapture
  step tests/test-fields --include-ignored --nocapture
  step tests/test-cudarc --include-ignored --nocapture
  step tests/test-gpu_misuse --include-ignored --nocapture
  # Fused time steps (1D): launch_steps and run_steps against run_cpu_steps, every boundary.
  step tests/test-gpu_steps --include-ignored --nocapture
  for e in laplace3d heat2d blur quickstart heat diffusion; do step examples/$e; done
  # Stage offsets of several fields (staged windows and the shared-memory baseline) and the
  # grid catalogue under memcheck.
  step compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu several_fields --nocapture
  step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
  # 1D through the same launch path: catalogue (array parameters, integer operations, several
  # fields), random stencils, every 4th sweep pattern.
  step env RC_GPU_SAMPLE=4 tests/test-gpu --include-ignored --nocapture
  ;;
perf)
  tar xzf perf.tgz
  # The tile sweep: defaults (now two-block bounds), 8 outputs per thread, baselines, copy, CuPy
  # and PyTorch in one run.
  step python3 grid_perf.py perf
  cp perf/results.csv "${OUT:-.}/results.csv" 2>/dev/null
  ;;
grid-bench)
  # Every 2D/3D stencil of issue 17 through #[stencil], against CuPy and PyTorch.
  cd "$root" && step bash bench/grid.sh .device-run/examples/bench "${OUT:-/tmp}/grid"
  ;;
extras)
  # Fused time steps (issue 18): 1D heat r=1 and a 9-tap r=4 stencil, 2^26 f32, 1000 steps,
  # against a copy and the one-step kernel; then the f16 box average (issue 16) against a copy.
  step examples/time_steps
  cd "$root" && step .device-run/examples/bench --half && cp -r bench/results/*f16* "${OUT:-/tmp}/" 2>/dev/null
  ;;
esac
echo "exit status: $status"
exit $status
