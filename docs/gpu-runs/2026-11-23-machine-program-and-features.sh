#!/usr/bin/env bash
# 2026-11-23: the machine program (issue 15) and the runtime features (issue 14) on a GPU.
# Binaries built on a machine without CUDA: ../shared/tools/device-bundle.sh, then
# `bash .ci/device-bin .device-bin/downstream`, then the four GPU test binaries, the examples and
# the downstream folder copied (debug information stripped) into .device-run/, carried here.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT [suite|bench]
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
case "${1:-suite}" in
  suite)
    # Every 2nd sweep pattern (RC_GPU_SAMPLE=2); the catalogue, random, signed-zero and 2^31 tests whole.
    step env RC_GPU_SAMPLE=2 .device-run/tests/test-gpu --include-ignored --nocapture
    step .device-run/tests/test-gpu_misuse --include-ignored --nocapture
    step .device-run/tests/test-runtime --include-ignored --nocapture
    step .device-run/tests/lib-rc_runtime --include-ignored
    for e in quickstart box heat nonlinear explain cust_interop; do step .device-run/examples/$e; done
    step bash .ci/downstream-gpu .device-run/downstream
    ;;
  bench)
    step .device-run/examples/bench --type f32 --radii 1,8,16,32 --out "${OUT:-/tmp}/bench"
    for e in quickstart heat cust_interop; do
      step compute-sanitizer --tool memcheck --error-exitcode 9 .device-run/examples/$e --n 100000
    done
    step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=8 .device-run/tests/test-gpu catalogue random signed --nocapture
    ;;
esac
echo "exit status: $status"
exit $status
