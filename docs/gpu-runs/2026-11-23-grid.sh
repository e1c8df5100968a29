#!/usr/bin/env bash
# 2026-11-23: 2D and 3D stencils (issue 17) on a GPU, through the macro and rc-runtime.
# Binaries built on a machine without CUDA (cargo test --release --no-run for tests gpu_grid, gpu,
# gpu_misuse, grid_methods and rc-runtime's; examples heat2d blur laplace3d heat quickstart box),
# debug information stripped, copied into .device-run/{tests,examples} and carried here.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
# 2D/3D: the grid catalogue over every shape, and a grid of more than 2^31 elements.
step .device-run/tests/test-gpu_grid --include-ignored --nocapture
step .device-run/tests/test-grid_methods --include-ignored --nocapture
step .device-run/tests/test-grid --include-ignored --nocapture
step .device-run/tests/lib-rc_runtime --include-ignored
# 1D through the generalized launch path: catalogue, random, signed zeros, every 4th sweep pattern.
step env RC_GPU_SAMPLE=4 .device-run/tests/test-gpu --include-ignored --nocapture
step .device-run/tests/test-gpu_misuse --include-ignored --nocapture
for e in heat2d blur laplace3d quickstart heat box; do step .device-run/examples/$e; done
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 .device-run/tests/test-gpu_grid grid_catalogue --nocapture
echo "exit status: $status"
exit $status
