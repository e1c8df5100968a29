#!/usr/bin/env bash
# ninetap4, call 1: branch pairs (named barriers per neighbour pair) against main 5a00417:
# gpu_steps 1D + memcheck, time_steps --1d A/B interleaved twice, ncu occupancy + stalls of both 1D fused interior kernels.
set -uo pipefail
cd .device-ninetap4; for f in *.gz; do gunzip -kf $f; done; chmod +x time_steps_* test-gpu_steps_*
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/r
echo "== gpu_steps (1D tests)"; ./test-gpu_steps_pairs launch_steps_and_run_steps_equal_run_cpu_steps --exact 2>&1 | tail -3 | tee $OUT/r/gpu_steps.log
./test-gpu_steps_pairs ping_pong 2>&1 | tail -2 | tee -a $OUT/r/gpu_steps.log
echo "== memcheck"; timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps_pairs launch_steps_and_run_steps_equal_run_cpu_steps --exact 2>&1 | tail -3 | tee $OUT/r/memcheck.log; echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/r/memcheck.log
for i in 1 2; do for b in main pairs; do echo "== $b run $i"; ./time_steps_$b --1d 2>&1 | tee $OUT/r/steps_${b}_$i.log | grep -E "r=1|r=4"; done; done
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|smsp__issue_active\.avg\.pct_of_peak_sustained_active|smsp__warps_active\.avg\.per_cycle_active|sm__inst_executed_pipe_fma\.avg\.pct_of_peak_sustained_active|launch__registers_per_thread|launch__occupancy_limit_.*|smsp__inst_executed\.sum|gpu__time_duration\.sum'
for b in main pairs; do for k in nine_tap heat; do
  ncu --launch-skip 12 -c 1 -k regex:^rc_${k}_steps\$ --section Occupancy --section LaunchStats --metrics "$m" ./time_steps_$b --1d --steps 200 > $OUT/r/ncu_${b}_$k.txt 2>&1
  echo "== ncu $b $k"; grep -E "rc_|Block Limit|Theoretical Occ|Achieved Occ|Registers Per|issue_stalled|issue_active|warps_active|fma|inst_executed.sum|duration" $OUT/r/ncu_${b}_$k.txt | awk '!/issue_stalled/ || $NF+0 > 0.02' | head -40
done; done
cd $OUT && tar czf call1.tgz r && rm -rf r
