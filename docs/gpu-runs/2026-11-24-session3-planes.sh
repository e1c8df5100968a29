#!/usr/bin/env bash
# 2026-11-24, third session, third GPU call: main after merging staged3d (distribution =
# planes(V): 3D tiles whose warps read a ring of input planes staged in shared memory).
# (1) every printed 2D/3D case (`RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid
# write_gpu_cases`, staged-plane kernels among them) bit for bit against the emulation, by
# docs/gpu-runs/grid_cases.py; (2) the 3D perf sweep's staged-plane tiles beside the register
# tiles (`RC_GRID_PERF`, 3D lines: defaults, p4/p8 rows 2 under two blocks, every planes(4)
# tile) by docs/gpu-runs/grid_perf.py. Carried in .device-probe/. Usage: bash THIS_SCRIPT
set -uo pipefail
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-probe && tar xzf cases.tgz && cd ..
python3 .device-probe/grid_cases.py .device-probe/cases > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -5 $OUT/cases.log; grep -ci "differ\|mismatch\|error" $OUT/cases.log
python3 docs/gpu-runs/grid_perf.py .device-probe/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep -v "cupy\|pytorch" $OUT/perf.log; cp .device-probe/perf/results.csv $OUT/perf.csv
