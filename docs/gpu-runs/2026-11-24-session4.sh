#!/usr/bin/env bash
# 2026-11-24, fourth session: main after merging the H200 branches (planes3d, grid2d, fused2d, fused1d); on an H200.
# Carried in .device-run/ (suite) or .device-bench/ (extras, grid-bench; bench and time_steps
# only): test binaries from `cargo test --release --features cudarc --no-run`
# (gpu, gpu_grid, gpu_misuse, gpu_steps, cudarc, fields, grid_methods) and examples (laplace3d
# heat2d blur quickstart heat diffusion bench time_steps) built without CUDA, stripped and
# gzipped; cases.tgz from `RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid
# write_gpu_cases`; grid_cases.py from docs/gpu-runs/.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT suite|extras|grid-bench
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
root=$(pwd)
bin=.device-run; [ "$1" = suite ] || bin=.device-bench
cd $bin
for f in tests/*.gz examples/*.gz; do [ -e "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
case "${1:?suite, extras or grid-bench}" in
suite)
  tar xzf cases.tgz
  # Printed 2D/3D kernels (2D rows streamed, 3D at 5 planes) bit for bit against the emulation.
  step python3 grid_cases.py cases
  # The grid catalogue (streamed 2D rows, 16-bit grids), the 2^31 grid, the methods.
  step tests/test-gpu_grid --include-ignored --nocapture
  step tests/test-grid_methods --include-ignored --nocapture
  step tests/test-fields --include-ignored --nocapture
  step tests/test-cudarc --include-ignored --nocapture
  step tests/test-gpu_misuse --include-ignored --nocapture
  # Fused time steps: 1D with the remainder as one fused launch, 2D fused strips, every boundary.
  step tests/test-gpu_steps --include-ignored --nocapture
  for e in laplace3d heat2d blur quickstart heat diffusion; do step examples/$e; done
  step compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu sixteen_bit --nocapture
  step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
  # 1D through the same launch path: catalogue (packed 16-bit among it), random stencils, every
  # 4th sweep pattern.
  step env RC_GPU_SAMPLE=4 tests/test-gpu --include-ignored --nocapture
  ;;
extras)
  # Fused time steps (1D heat and 9-tap, 2D heat and its degrees), then the f16 box average
  # (packed granule(8) and round-robin) and the two-field diffusion against the copy.
  step examples/time_steps --sweep
  step timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps
  cd "$root" && step .device-bench/examples/bench --half && step .device-bench/examples/bench --fields
  # The device returns at most 8 files: the new result folders as one archive.
  tar czf "${OUT:-/tmp}/extras.tgz" bench/results/*h200*f16* bench/results/*h200*fields* 2>/dev/null
  ;;
grid-bench)
  cd "$root" && step bash bench/grid.sh .device-bench/examples/bench /tmp/grid
  tar czf "${OUT:-/tmp}/grid.tgz" -C /tmp grid
  ;;
esac
echo "exit status: $status"
exit $status
