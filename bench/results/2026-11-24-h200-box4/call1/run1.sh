#!/bin/bash
# Call 1 of helper box4 (H200): probes of box r = 4 (rc main's default, rc's tile looped over row
# blocks, a hand-written streamed kernel), every output bit-exact; ncu on four of them.
D=.device-box4
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
python3 $D/probe.py 2>&1 | tee $OUT/probe.log
M="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --metrics smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
timeout 150 ncu --clock-control none $M -k regex:"rc_default|^k$|box4_stream" python3 $D/probe.py rc_main_default,rc_rowblocks_k4_mb3,stream_p4_h44_w8_mb4,stream_p4_h44_w8_mb3 > $OUT/ncu.txt 2>&1
echo "ncu exit $?"
grep -E "^  [a-z_0-9]+ \(|Duration|SM Frequency|Issue Slots Busy|No Eligible|Eligible Warps|Active Warps Per|no_instruction|long_scoreboard|not_selected|inst_executed.sum|Registers Per" $OUT/ncu.txt
