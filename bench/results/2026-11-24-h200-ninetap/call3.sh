#!/usr/bin/env bash
# Lead, session 6, call 3: where the fused kernels' issue slots go (stall reasons per issued instruction), main 0bf9188.
set -uo pipefail
cd .device-lead; gunzip -kf time_steps.gz; chmod +x time_steps
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|smsp__issue_active\.avg\.pct_of_peak_sustained_active|smsp__warps_active\.avg\.per_cycle_active|sm__inst_executed_pipe_fma\.avg\.pct_of_peak_sustained_active|launch__registers_per_thread'
ncu --launch-skip 12 -c 1 -k regex:^rc_nine_tap_steps$ --metrics "$m" ./time_steps --1d --steps 200 > $OUT/ncu_ninetap.txt 2>&1
ncu --launch-skip 6 -c 2 -k regex:^rc_heat2d_steps --metrics "$m" ./time_steps --2d --steps 30 > $OUT/ncu_heat2d.txt 2>&1
grep -E "rc_|issue_stalled|issue_active|warps_active|fma|registers" $OUT/ncu_ninetap.txt | awk '$NF+0 > 0.05 || /rc_|active|fma|registers/' | head -40
