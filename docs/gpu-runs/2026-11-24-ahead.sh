#!/usr/bin/env bash
# 2026-11-24 (second session): 2D/3D streaming with each plane loaded a step ahead, 2D rows
# streamed (`stream = true`), 3D default 32 planes, on a GPU.
# Carried in .device-run/: test binaries gpu_grid and grid_methods (cargo test --release
# --features cudarc --no-run), examples bench heat2d blur laplace3d, built without CUDA, stripped
# and gzipped; cases.tgz from `RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid
# write_gpu_cases`; grid_cases.py from docs/gpu-runs/.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT suite|grid-bench
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
root=$(pwd)
cd .device-run
for f in tests/*.gz examples/*.gz; do [ -e "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
case "${1:?suite or grid-bench}" in
suite)
  tar xzf cases.tgz
  # 276 printed 2D/3D kernels (2D rows streamed, 3D interior tiles loading planes ahead) bit
  # for bit against the emulation.
  step python3 grid_cases.py cases
  # The grid catalogue through the macro (box9x9 and streamed_weighted stream their rows) over
  # every shape, a grid of more than 2^31 elements, the methods.
  step tests/test-gpu_grid --include-ignored --nocapture
  step tests/test-grid_methods --include-ignored --nocapture
  for e in laplace3d heat2d blur; do step examples/$e; done
  step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
  ;;
grid-bench)
  cd "$root" && step bash bench/grid.sh .device-run/examples/bench "${OUT:-/tmp}/grid"
  ;;
esac
echo "exit status: $status"
exit $status
