#!/bin/bash
# Call 3 (record): branch fused1d, 1D fused kernels with 16 elements per lane and T from the
# cost model (heat 32, 9-tap 16), two steps per loop iteration. Benchmark with the sweep, the
# 1D GPU time-steps test under memcheck (bit-exact vs run_cpu_steps, every boundary), ncu stalls.
cd "$(dirname "$0")"
for f in time_steps test-gpu_steps; do gunzip -kf $f.gz; chmod +x $f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
echo "== time_steps --1d --sweep"; ./time_steps --1d --sweep 2>&1 | tee $OUT/time_steps.log
echo "== gpu_steps 1D under memcheck"; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --exact --nocapture 2>&1 | tail -8 | tee $OUT/gpu_steps_memcheck.log; echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/gpu_steps_memcheck.log
timeout 60 ./test-gpu_steps ping_pong --nocapture 2>&1 | tail -3 | tee -a $OUT/gpu_steps_memcheck.log
echo "== ncu"
M="--metrics regex:smsp__average_warps_issue_stalled_(long_scoreboard|not_selected|selected|math_pipe_throttle|short_scoreboard|wait|drain|dispatch_stall)_per_issue_active\.ratio,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__pcsamp_warps_issue_stalled_no_instructions,sm__warps_active.avg.per_cycle_active,smsp__issue_inst0.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__inst_executed.sum,launch__registers_per_thread"
timeout 90 ncu --clock-control none $M -k regex:'^rc_heat_steps$' --launch-skip 2 --launch-count 1 ./time_steps --1d --steps 32 --check-n 4096 > $OUT/ncu_heat.txt 2>&1
grep -E "stalled|inst_issued|warps_active|duration|cycles|inst_executed|registers" $OUT/ncu_heat.txt
cd $OUT && tar czf all.tgz *.log *.txt
