#!/bin/bash
# Run 1 (fused2d): the branch's sweep, PTX variants timed side by side, ncu on the 2D fused kernels.
D=.device-fused2d
R=$OUT/run1; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,driver_version,power.limit --format=csv > $R/device.txt 2>&1
gunzip -c $D/time_steps_new.gz > /tmp/ts_new && chmod +x /tmp/ts_new
cd $D/ptx && ls *.ptx > $R/variants.txt
python3 ../ptxbench.py 8192 8192 *.ptx > $R/ptxbench.log 2>&1
cd - > /dev/null
/tmp/ts_new --sweep > $R/sweep_new.log 2>&1
cd $D/ptx
timeout 200 ncu --kernel-name regex:rc_heat2d --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis \
  --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__inst_executed_op_shfl.sum,sm__warps_active.avg.per_cycle_active,smsp__average_warp_latency_issue_stalled_math_pipe_throttle,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fmaheavy.sum,smsp__inst_executed_pipe_fmalite.sum \
  python3 ../ptxbench.py --once 8192 8192 a_main_T8.ptx b_new_T8.ptx d_intonly_T8.ptx e_mb4_T8.ptx b_new_fuse6.ptx > $R/ncu.txt 2>&1
cd - > /dev/null
tail -5 $R/*.log $R/ncu.txt
tar czf $OUT/run1.tgz -C $OUT run1
