#!/bin/bash
# Run 3 (fused2d, final): GPU bit-exact tests, the branch's sweep, PTX variants side by side,
# ncu on the final 2D fused kernel, memcheck over the fused launches.
D=.device-fused2d
R=$OUT/run3; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
gunzip -c $D/time_steps.gz > /tmp/time_steps && chmod +x /tmp/time_steps
gunzip -c $D/gpu_steps.gz > /tmp/gpu_steps && chmod +x /tmp/gpu_steps
( time /tmp/gpu_steps --include-ignored --nocapture ) > $R/gpu_steps.log 2>&1; echo "exit $?" >> $R/gpu_steps.log
/tmp/time_steps --sweep > $R/sweep.log 2>&1; echo "exit $?" >> $R/sweep.log
cd $D/ptx3 && ls *.ptx > $R/variants.txt
python3 ../ptxbench.py 8192 8192 *.ptx > $R/ptxbench.log 2>&1
S=smsp__average_warps_issue_stalled
timeout 150 ncu --kernel-name regex:rc_heat2d --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section LaunchStats --section SchedulerStats \
  --metrics smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,${S}_long_scoreboard_per_issue_active.ratio,${S}_short_scoreboard_per_issue_active.ratio,${S}_wait_per_issue_active.ratio,${S}_math_pipe_throttle_per_issue_active.ratio,${S}_not_selected_per_issue_active.ratio,${S}_selected_per_issue_active.ratio,${S}_no_instruction_per_issue_active.ratio,${S}_dispatch_stall_per_issue_active.ratio,${S}_mio_throttle_per_issue_active.ratio,${S}_lg_throttle_per_issue_active.ratio,${S}_branch_resolving_per_issue_active.ratio \
  python3 ../ptxbench.py --once 8192 8192 a_main_T8_r128.ptx b_final_T8_r64.ptx z_int_T8_r64.ptx > $R/ncu.txt 2>&1
cd - > /dev/null
( time timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/gpu_steps --include-ignored ) > $R/memcheck.log 2>&1; echo "exit $?" >> $R/memcheck.log
tail -n 3 $R/gpu_steps.log $R/memcheck.log; cat $R/sweep.log $R/ptxbench.log
tar czf $OUT/run3.tgz -C $OUT run3
