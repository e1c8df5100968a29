#!/bin/bash
# Call 2: rc's 1D fused kernels from branch fused1d (16 elements per lane, 4 steps per loop
# iteration on interior tiles): benchmark with the sweep, GPU tests of 1D time steps, memcheck,
# ncu of the fused heat kernel (stall reasons).
cd "$(dirname "$0")"
for f in time_steps test-gpu_steps; do gunzip -kf $f.gz; chmod +x $f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
echo "== time_steps --1d --sweep"; ./time_steps --1d --sweep 2>&1 | tee $OUT/time_steps.log
echo "== gpu_steps (1D)"; timeout 150 ./test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --exact --nocapture 2>&1 | tail -5 | tee $OUT/gpu_steps.log
timeout 60 ./test-gpu_steps ping_pong --nocapture 2>&1 | tail -3 | tee -a $OUT/gpu_steps.log
echo "== memcheck"; timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --exact 2>&1 | tail -6 | tee $OUT/memcheck.log; echo "memcheck exit ${PIPESTATUS[0]}" | tee -a $OUT/memcheck.log
echo "== ncu"
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section ComputeWorkloadAnalysis --section LaunchStats"
M="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
timeout 120 ncu --clock-control none $S $M -k regex:'^rc_heat_steps$' --launch-skip 2 --launch-count 1 ./time_steps --1d --steps 16 --check-n 4096 > $OUT/ncu_heat.txt 2>&1
grep -E "Duration|Issue Slots Busy|No Eligible|Registers Per|Achieved Active|stalled" $OUT/ncu_heat.txt | head -40
cd $OUT && tar czf all.tgz *.log *.txt
