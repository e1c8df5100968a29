#!/usr/bin/env bash
# planes3d, second GPU call (H200): after the edge-vector fetch, 2+4+2 ring reads and 4 rows for
# staged planes: (1) every printed 2D/3D case bit-exact against the emulation; (2) test-gpu_grid
# (catalogue, defaults and explicit planes, the 2^31 grid); (3) memcheck on the catalogue;
# (4) rc's 3D tiles timed (defaults and staged planes at r = 1 and 2); (5) ncu of the new defaults.
set -uo pipefail
D=.device-planes3d
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd $D && tar xzf bundle.tgz && gunzip -kf test-gpu_grid.gz && chmod +x test-gpu_grid && cd ..
python3 $D/grid_perf.py $D/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep -v "pytorch\|cupy" $OUT/perf.log; cp $D/perf/results.csv $OUT/perf.csv
python3 docs/gpu-runs/grid_cases.py $D/cases > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -3 $OUT/cases.log
step $D/test-gpu_grid --include-ignored > $OUT/gpu_grid.log 2>&1; tail -5 $OUT/gpu_grid.log
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 $D/test-gpu_grid grid_catalogue > $OUT/memcheck.log 2>&1; tail -5 $OUT/memcheck.log
for d in ncu_box3d2 ncu_star3d1; do
  timeout 100 ncu --kernel-name k --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis \
    python3 $D/grid_perf.py $D/$d > $OUT/$d.txt 2>&1
  echo "== $d"; grep -E "Throughput|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  " $OUT/$d.txt | head -20
done
echo "exit status: $status"
cd $OUT && tar czf call2.tgz *.log *.csv *.txt && rm -f *.log *.txt *.csv
