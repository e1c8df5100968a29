#!/usr/bin/env bash
# 2026-11-24, third session, fourth GPU call: main after merging planes2 (staged-plane rings past
# 48 KiB in dynamic shared memory, launched through cust and cudarc; box r = 2 in 93-123
# registers). (1) every printed 2D/3D case (352, the 8-warp dynamic rings among them) by
# grid_cases.py; (2) tests/gpu_grid (catalogue incl. box27_planes, star3d2_planes with a 97920-byte
# dynamic ring) and tests/cudarc, then memcheck on the catalogue; (3) the 3D perf sweep's
# staged-plane tiles (4 and 8 warps, 2 and 4 rows) beside the register tiles by grid_perf.py.
# Carried in .device-probe/. Usage from the repository root: bash THIS_SCRIPT
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-probe && tar xzf cases.tgz && for f in tests/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done && cd ..
python3 docs/gpu-runs/grid_cases.py .device-probe/cases > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -2 $OUT/cases.log
step .device-probe/tests/test-gpu_grid --include-ignored
step .device-probe/tests/test-cudarc --include-ignored
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 .device-probe/tests/test-gpu_grid grid_catalogue
python3 docs/gpu-runs/grid_perf.py .device-probe/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep -v "cupy corr\|pytorch" $OUT/perf.log; cp .device-probe/perf/results.csv $OUT/perf.csv
echo "exit status: $status"
