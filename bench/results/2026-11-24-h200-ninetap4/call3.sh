#!/usr/bin/env bash
# ninetap4, call 3: 1D block tiles' exchange waits. Binaries of branch ninetap4 (built without CUDA):
# ringlate = the branch (ring pair barriers where they keep the blocks per SM + half the step's
# own arithmetic ahead of the wait), ring = pair barriers only, late = the wait later only; main 5a00417.
set -uo pipefail
cd .device-ninetap4; for f in *.gz; do gunzip -kf $f; done; chmod +x time_steps_* test-gpu_steps
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/r
echo "== gpu_steps 1D (ringlate)"; timeout 150 ./test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --exact 2>&1 | tail -3 | tee $OUT/r/gpu_steps.log
timeout 30 ./test-gpu_steps ping_pong 2>&1 | tail -2 | tee -a $OUT/r/gpu_steps.log
echo "== memcheck (ringlate)"; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --exact 2>&1 | tail -3 | tee $OUT/r/memcheck.log; echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/r/memcheck.log
for i in 1 2; do for b in main ringlate ring late; do echo "== $b run $i"; timeout 60 ./time_steps_$b --1d 2>&1 | tee $OUT/r/steps_${b}_$i.log | grep -E "r=1|r=4|rror"; done; done
echo "== PTX variants (interior kernel alone)"; (cd var && timeout 60 python3 bench_ptx.py 2 rc_nine_tap_steps.base.ptx rc_nine_tap_steps.ringpairs.ptx rc_nine_tap_steps.late0-650.ptx rc_nine_tap_steps.ringpairs_late-650.ptx rc_heat_steps.base.ptx rc_heat_steps.late0.ptx 2>&1 | tee $OUT/r/variants.log)
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|smsp__issue_active\.avg\.pct_of_peak_sustained_active|smsp__inst_executed\.sum\.pct_of_peak_sustained_elapsed|smsp__warps_active\.avg\.per_cycle_active|sm__inst_executed_pipe_fma\.avg\.pct_of_peak_sustained_active|launch__registers_per_thread|launch__occupancy_limit_(registers|barriers)|gpu__time_duration\.sum$'
for k in nine_tap heat; do timeout 90 ncu --launch-skip 12 -c 1 -k regex:^rc_${k}_steps\$ --metrics "$m" ./time_steps_ringlate --1d --steps 200 > $OUT/r/ncu_ringlate_$k.txt 2>&1
echo "== ncu ringlate $k"; grep -E "duration|issue_active|elapsed|warps_active|fma|registers|occupancy_limit|stalled" $OUT/r/ncu_ringlate_$k.txt | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '$NF+0 > 0.04 {print $1, $NF}' | paste -sd' '; done
cd $OUT && tar czf call3.tgz r && rm -rf r
