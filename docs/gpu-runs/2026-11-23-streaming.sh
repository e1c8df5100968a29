#!/usr/bin/env bash
# 2026-11-23 (third session): 3D tiles streamed along z (pipelined steps), on a GPU.
# Carried in .device-run/: test binaries (cargo test --release --no-run: gpu_grid, grid_methods,
# gpu, gpu_misuse) and examples (laplace3d heat2d blur quickstart heat) built without CUDA and
# stripped; cases.tgz and perf.tgz from `RC_GRID_CASES=DIR RC_GRID_PERF=DIR cargo test --release
# -p rc-core --test grid`; grid_cases.py and grid_perf.py from docs/gpu-runs/.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-run
tar xzf cases.tgz && tar xzf perf.tgz
# 210 printed 2D/3D kernels (3D ones streaming 5 planes) bit for bit against the emulation.
step python3 grid_cases.py cases
# Through the macro and the runtime: the grid catalogue (3D stencils now stream 16 planes by
# default) over every shape, a grid of more than 2^31 elements, the 2D/3D methods.
step tests/test-gpu_grid --include-ignored --nocapture
step tests/test-grid_methods --include-ignored --nocapture
# 1D through the same launch path: catalogue, random, every 4th sweep pattern; misuse.
step env RC_GPU_SAMPLE=4 tests/test-gpu --include-ignored --nocapture
step tests/test-gpu_misuse --include-ignored --nocapture
for e in laplace3d heat2d blur quickstart heat; do step examples/$e; done
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
# The tile sweep: defaults, streaming tiles, baselines, copy, CuPy and PyTorch in one run.
step python3 grid_perf.py perf
cp perf/results.csv "${OUT:-.}/results.csv" 2>/dev/null
echo "exit status: $status"
exit $status
