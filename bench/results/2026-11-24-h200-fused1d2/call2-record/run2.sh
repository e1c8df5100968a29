#!/bin/bash
# Call 2: the record: time_steps --sweep --1d, gpu_steps (all tests), memcheck of the 1D GPU tests, ncu of the fused kernels.
cd "$(dirname "$0")"
gunzip -kf ts.gz gs.gz; chmod +x ts gs
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv | tee $OUT/time_steps.log
date -u | tee -a $OUT/time_steps.log
timeout 150 ./ts --sweep --1d 2>&1 | tee -a $OUT/time_steps.log
timeout 120 ./gs --test-threads 1 2>&1 | tee $OUT/gpu_steps.log | tail -4
timeout 150 compute-sanitizer --tool memcheck ./gs --test-threads 1 launch_steps_and_run_steps_equal_run_cpu_steps ping_pong 2>&1 | tee $OUT/gpu_steps_memcheck.log | tail -4
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis"
timeout 70 ncu --clock-control none $S -k regex:'rc_heat_steps$' --launch-skip 3 --launch-count 1 ./ts --1d --steps 400 > $OUT/ncu_heat.txt 2>&1
timeout 70 ncu --clock-control none $S -k regex:'rc_nine_tap_steps$' --launch-skip 3 --launch-count 1 ./ts --1d --steps 400 > $OUT/ncu_nine.txt 2>&1
grep -E "Duration|Registers Per|Achieved Occ|Issue Slots Busy|Executed Ipc A|No Eligible|Block Limit Reg|Warp Cycles Per Issued" $OUT/ncu_heat.txt $OUT/ncu_nine.txt | head -24
cd $OUT && tar czf record.tgz *.log *.txt
