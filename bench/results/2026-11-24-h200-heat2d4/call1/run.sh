#!/bin/bash
# heat2d4 call 1: main's time_steps against the branch's (32-bit division in the fused prologue,
# edges kernel launched over its own blocks; sweep adds blocks of 32 threads); gpu_steps 2D; ncu.
D=.device-heat2d4; cd $D && gunzip -kf *.gz && chmod +x time_steps_* test-gpu_steps && cd ..
R=$OUT/c1; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
(cd $D && timeout 150 ./test-gpu_steps --test-threads 1 equal_run_cpu_steps_in_) > $R/gpu_steps_2d3d.log 2>&1; echo "gpu_steps 2d rc=$?" >> $R/gpu_steps_2d3d.log
{ echo "== main 1"; $D/time_steps_main --2d; echo "== new 1 (sweep)"; $D/time_steps_new --2d --sweep; echo "== main 2"; $D/time_steps_main --2d; echo "== new 2"; $D/time_steps_new --2d; } > $R/ab.log 2>&1
M='--metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
timeout 100 ncu --clock-control none --kernel-name regex:'rc_heat2d_steps' --launch-skip 10 --launch-count 2 $M $D/time_steps_new --2d --steps 30 > $R/ncu_new.txt 2>&1
timeout 100 ncu --clock-control none --kernel-name regex:'rc_heat2d_block32_steps' --launch-skip 10 --launch-count 2 $M $D/time_steps_new --2d --sweep --steps 30 > $R/ncu_new32.txt 2>&1
timeout 100 ncu --clock-control none --kernel-name regex:'rc_heat2d_steps' --launch-skip 10 --launch-count 2 $M $D/time_steps_main --2d --steps 30 > $R/ncu_main.txt 2>&1
tar czf $OUT/c1.tgz -C $OUT c1
