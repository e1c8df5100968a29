#!/usr/bin/env bash
# 2026-11-24, third session, after the review mend c54fc3c (StagedWindow with Stage::Warp /
# Stage::PlaneRing instead of two structs): the tests that launch staged windows and staged
# planes. Carried in .device-run/: test binaries gpu_grid, gpu, cudarc (`cargo test --release
# --features cudarc --no-run`, built without CUDA, stripped, gzipped), cases.tgz from
# `RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid write_gpu_cases`, grid_cases.py.
# Usage from the repository root: bash THIS_SCRIPT
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-run && tar xzf cases.tgz && for f in tests/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done
step python3 grid_cases.py cases
step tests/test-gpu_grid --include-ignored
step tests/test-cudarc --include-ignored
step env RC_GPU_SAMPLE=4 tests/test-gpu granule_window_and_staged catalogue several_fields --nocapture
echo "exit status: $status"
exit $status
