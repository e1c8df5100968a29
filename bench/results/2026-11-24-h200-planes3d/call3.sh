#!/usr/bin/env bash
# planes3d, third GPU call (H200): staged planes with precomputed vector offsets and one load per
# element at the edges: (1) every printed 2D/3D case bit-exact against the emulation;
# (2) test-gpu_grid catalogue tests; (3) memcheck on the catalogue; (4) rc's 3D tiles timed;
# (5) ncu of rc's star r = 1 planes tile and the probe's (bench/probes/staged3d.cu star1).
set -uo pipefail
D=.device-planes3d
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd $D && tar xzf bundle.tgz && gunzip -kf test-gpu_grid.gz && chmod +x test-gpu_grid && cd ..
python3 $D/grid_perf.py $D/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep "^copy\|^[sb].* rc " $OUT/perf.log | awk '{print $1, $3, $6, $8, $12}'; cp $D/perf/results.csv $OUT/perf.csv
python3 docs/gpu-runs/grid_cases.py $D/cases > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -1 $OUT/cases.log
step $D/test-gpu_grid grid_catalogue sixteen_bit array_parameters > $OUT/gpu_grid.log 2>&1; grep "test result\|launches" $OUT/gpu_grid.log
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 $D/test-gpu_grid grid_catalogue > $OUT/memcheck.log 2>&1; tail -2 $OUT/memcheck.log
nvcc -O3 -arch=sm_90 -std=c++17 $D/staged3d.cu -o /tmp/staged3d && /tmp/staged3d star1 | tee $OUT/probe.log
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis"
timeout 60 ncu --kernel-name regex:staged --launch-skip 1 --launch-count 1 $S /tmp/staged3d star1 > $OUT/ncu_probe_star3d1.txt 2>&1
timeout 60 ncu --kernel-name k --launch-count 1 $S python3 $D/grid_perf.py $D/ncu_star3d1 > $OUT/ncu_rc_star3d1.txt 2>&1
for f in $OUT/ncu_probe_star3d1.txt $OUT/ncu_rc_star3d1.txt; do echo "== $f"; grep -E "DRAM Throughput|L1/TEX Cache|Duration|Compute \(SM\)|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  " $f | head -12; done
echo "exit status: $status"
cd $OUT && tar czf call3.tgz *.log *.csv *.txt && rm -f *.log *.txt *.csv
