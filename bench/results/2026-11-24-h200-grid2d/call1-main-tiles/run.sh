#!/bin/bash
# Call 1 of the grid2d helper: time the 2D tiles of main (+ the reverted plane-ahead streamed tiles) and ncu the defaults.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
mkdir -p /tmp/c1 && tar xzf .device-grid2d/c1.tgz -C /tmp/c1
python3 docs/gpu-runs/grid_perf.py /tmp/c1/p > $OUT/perf.log 2>&1
python3 docs/gpu-runs/grid_perf.py /tmp/c1/a > $OUT/ahead.log 2>&1
cp /tmp/c1/p/results.csv $OUT/perf.csv; cp /tmp/c1/a/results.csv $OUT/ahead.csv
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis"
M="--metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"
timeout 200 ncu --clock-control none $S $M -k k --launch-skip 0 python3 docs/gpu-runs/grid_profile.py /tmp/c1/p 0 17 141 235 278 > $OUT/ncu.txt 2>&1
timeout 60 ncu --clock-control none $S $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c1/a 191 200 > $OUT/ncu-ahead.txt 2>&1
cd $OUT; echo "--- summary (fraction of copy)"; grep -hE "^(star|box)" perf.log ahead.log | awk '{printf "%-8s %-62s %6s %5s %s\n",$1,$3,$6,$8,$12}'
