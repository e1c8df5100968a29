#!/bin/bash
D=.device-p2
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 $D/probe.py 2>&1 | tee $OUT/probe.log
M="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --metrics smsp__inst_executed.sum,lts__t_sector_hit_rate.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio"
timeout 200 ncu --clock-control none $M -k regex:"^k$" python3 $D/probe.py ${1:-d128_r4_mb8_nodiv,d64_r4_mb16_nodiv} > $OUT/ncu.txt 2>&1
echo "ncu exit $?"
grep -E "^  k |Duration|SM Frequency|Issue Slots Busy|No Eligible|Eligible Warps|Active Warps Per|Achieved Occ|long_scoreboard|no_instruction|inst_executed.sum|Registers Per|hit_rate" $OUT/ncu.txt
