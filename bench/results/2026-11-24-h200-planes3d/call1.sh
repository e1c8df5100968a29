#!/usr/bin/env bash
# planes3d, first GPU call (H200): the staged-plane probe (register and cp.async rings) and rc's 3D
# tiles side by side; ncu of the star r1 and box r2 defaults and a star r1 planes tile.
set -uo pipefail
D=.device-planes3d
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
python3 $D/grid_perf.py $D/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep -v "pytorch" $OUT/perf.log; cp $D/perf/results.csv $OUT/perf.csv
nvcc -O3 -arch=sm_90 -std=c++17 $D/staged3d.cu -o /tmp/staged3d 2>&1 | tail -20 && /tmp/staged3d > $OUT/probe.log 2>&1; cat $OUT/probe.log
for d in ncu_star3d1 ncu_box3d2 ncu_star3d1_planes; do
  timeout 120 ncu --kernel-name k --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis \
    python3 $D/grid_perf.py $D/$d > $OUT/$d.txt 2>&1
  echo "== $d"; grep -E "Throughput|Duration|Occupancy|Registers|Stall|Warp Cycles|Block Limit|Executed Ipc|Issue Slots|Issued Warp|Eligible|Active Warps|Executed Instructions|Shared Memory" $OUT/$d.txt | head -50
done
cd $OUT && tar czf call1.tgz *.log *.csv *.txt && rm -f *.log *.txt *.csv
