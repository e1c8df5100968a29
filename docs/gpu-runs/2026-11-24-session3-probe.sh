#!/usr/bin/env bash
# 2026-11-24, third session, first GPU call: what limits rc's 3D tiles, and what a staged-plane
# design reaches. (1) bench/probes/staged3d.cu (input planes staged in shared memory, bit-exact
# against a naive kernel of the same tap order); (2) rc's 3D tiles of the perf sweep
# (`RC_GRID_PERF=DIR cargo test --release -p rc-core --test grid write_perf`, 3D lines only:
# defaults with the streaming register slack, p4/p8 rows 2, p4 rows 4, the shared-memory
# baseline) timed by docs/gpu-runs/grid_perf.py; (3) ncu of the 3D star r=2 and box r=1 defaults.
# Carried in .device-probe/. Usage from the repository root: bash THIS_SCRIPT
set -uo pipefail
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
nvcc -O3 -arch=sm_90 -std=c++17 bench/probes/staged3d.cu -o /tmp/staged3d && /tmp/staged3d | tee $OUT/probe.log
python3 docs/gpu-runs/grid_perf.py .device-probe/perf > $OUT/perf.log 2>&1; tail -40 $OUT/perf.log; cp .device-probe/perf/results.csv $OUT/perf.csv
for d in ncu_star3d2 ncu_box3d1; do
  ncu --kernel-name k --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_bytes.sum \
    python3 docs/gpu-runs/grid_perf.py .device-probe/$d > $OUT/$d.txt 2>&1
  grep -E "Throughput|Duration|Occupancy|Registers|lts__|dram__|l1tex__|Stall|Warp Cycles|Block Limit|Waves" $OUT/$d.txt | head -60
done
