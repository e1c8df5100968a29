#!/bin/bash
# Call 1 of helper grid2d2: 2D tiles that evaluate input row after input row (new) against the
# same tiles in program order (old, main 9d315b9) in one run; printed cases bit-exact; memcheck on
# the small ones; ncu on the box r = 2 and r = 4 candidates.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c1 && tar xzf .device-grid2d2/c1.tgz -C /tmp/c1
python3 docs/gpu-runs/grid_cases.py /tmp/c1/cases > $OUT/cases.log 2>&1; echo "cases exit $?"; tail -2 $OUT/cases.log
python3 docs/gpu-runs/grid_perf.py /tmp/c1/new > $OUT/new.log 2>&1; echo "new exit $?"
python3 docs/gpu-runs/grid_perf.py /tmp/c1/old > $OUT/old.log 2>&1; echo "old exit $?"
cp /tmp/c1/new/results.csv $OUT/new.csv; cp /tmp/c1/old/results.csv $OUT/old.csv
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats"
timeout 100 ncu --clock-control none $S --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum -k k python3 docs/gpu-runs/grid_profile.py /tmp/c1/new 162 164 270 272 274 > $OUT/ncu.txt 2>&1; echo "ncu exit $?"
timeout 120 compute-sanitizer --tool memcheck --print-limit 20 python3 docs/gpu-runs/grid_cases.py /tmp/c1/small > $OUT/memcheck.log 2>&1; echo "memcheck exit $?"; grep -E "ERROR SUMMARY" $OUT/memcheck.log; tail -1 $OUT/memcheck.log
cd $OUT; echo "--- rc 2D tiles (fraction of copy), new then old"; for f in new old; do echo "== $f"; grep -E "^(star|box)" $f.log | grep " rc " | awk '{printf "%-6s %-50s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}' | sort -k1,1 -k4,4nr | awk '{c[$1]++} c[$1]<=6'; done
