#!/usr/bin/env bash
# 2026-11-24: ncu profiles of the 2D/3D kernels that miss issue 17's targets (the defaults of 2D
# box r=4, 3D star r=1 and r=2, 3D box r=2) and of 3D star r=1 with 8 outputs per thread (0.92
# of copy against 0.78), from perf.tgz (RC_GRID_PERF) in .device-run/.
set -uo pipefail
cd .device-run && tar xzf perf.tgz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --set full -k k -o "${OUT:-.}/grid" -f python3 grid_profile.py perf 80 96 133 184 228
ncu -i "${OUT:-.}/grid.ncu-rep" --page details --print-units base \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
  --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
