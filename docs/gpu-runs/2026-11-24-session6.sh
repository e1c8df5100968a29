#!/usr/bin/env bash
# 2026-11-24, sixth session: main after merging this session's branches (terms, fused2d3, and the
# helpers' grid2d3 / planes3d3 where merged); on an H200.
# Carried in .device-run/ (suite) or .device-bench/ (steps, grid): test binaries from
# `cargo test --release --features cudarc --no-run` (gpu, gpu_grid, gpu_misuse, gpu_steps, cudarc,
# fields, grid_methods), examples (laplace3d heat2d blur quickstart heat diffusion time_steps
# bench) built without CUDA, stripped and gzipped; cases.tgz from `RC_GRID_CASES=DIR cargo test
# --release -p rc-core --test grid write_gpu`; grid_cases.py from docs/gpu-runs/.
# (/work/notes/bundle6.sh builds them.) .device-bench also carries test-gpu_steps.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT suite|steps|sweep|grid [STENCILS]
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
root=$(pwd)
bin=.device-run; case "$1" in steps|sweep|grid) bin=.device-bench;; esac
cd $bin
for f in tests/*.gz examples/*.gz; do [ -e "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
case "${1:?suite, steps, sweep or grid}" in
suite)
  tar xzf cases.tgz
  # Printed 2D/3D kernels bit for bit against the emulation.
  step python3 grid_cases.py cases
  step tests/test-gpu_grid --include-ignored --nocapture
  step tests/test-grid_methods --include-ignored --nocapture
  step tests/test-fields --include-ignored --nocapture
  step tests/test-cudarc --include-ignored --nocapture
  step tests/test-gpu_misuse --include-ignored --nocapture
  # Fused time steps: 1D block tiles (split), 2D split on a side stream, 3D, every boundary.
  step tests/test-gpu_steps --include-ignored --nocapture
  for e in laplace3d heat2d blur quickstart heat diffusion; do step examples/$e; done
  step compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu sixteen_bit --nocapture
  step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
  step timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps
  # 1D through the same launch path: catalogue, random stencils, every 8th sweep pattern.
  step env RC_GPU_SAMPLE=8 tests/test-gpu --include-ignored --nocapture
  ;;
steps)
  # Fused time steps: bit-exact (and memcheck), then every stencil and degree.
  step tests/test-gpu_steps --include-ignored --nocapture
  step timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps
  step examples/time_steps --sweep
  ;;
sweep)
  # Fused time steps, every stencil and degree (bit-exactness: the suite's gpu_steps).
  step examples/time_steps --sweep
  ;;
grid)
  # One-step 2D/3D stencils this session's branches changed, CuPy and PyTorch in the same run.
  cd "$root" && step bash bench/grid.sh .device-bench/examples/bench /tmp/grid --stencils "${2:?stencils}"
  tar czf "${OUT:-/tmp}/grid.tgz" -C /tmp grid
  ;;
esac
echo "exit status: $status"
exit $status
