#!/usr/bin/env bash
# 2026-11-24, third session, second GPU call: main after merging fuse3d (3D fused time steps,
# valid with coefficient fields on the GPU). Carried in .device-mid/: test binaries gpu_steps and
# cudarc (`cargo test --release --features cudarc --no-run`) and examples/time_steps, built
# without CUDA, stripped, gzipped. Usage from the repository root: bash THIS_SCRIPT
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-mid
for f in tests/*.gz examples/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done
step tests/test-gpu_steps --include-ignored --nocapture
step tests/test-cudarc --include-ignored
step timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps
step examples/time_steps
echo "exit status: $status"
exit $status
