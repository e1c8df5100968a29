#!/bin/bash
# fused2d3 call 2: v2 (masked x rule + edge strips numbered first) beside v1 (masked x rule) and main.
D=.device-fused2d3; cd $D && gunzip -kf *.gz && chmod +x time_steps_* gpu_steps_v2 && cd ..
R=$OUT/r2; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
(cd $D && timeout 150 ./gpu_steps_v2 --test-threads 1 launch_steps_and_run_steps_equal_run_cpu_steps_in_2d) > $R/gpu_steps_2d.log 2>&1; echo "gpu_steps 2d rc=$?" >> $R/gpu_steps_2d.log
for i in 1 2 3; do for b in main v1 v2; do echo "== $b run $i"; $D/time_steps_$b --2d; done; done > $R/ab.log 2>&1
$D/time_steps_v2 --2d --sweep > $R/sweep_v2.log 2>&1
timeout 60 ncu --kernel-name regex:heat2d_steps --launch-skip 204 --launch-count 2 --section LaunchStats --section Occupancy --metrics gpu__time_duration.sum,smsp__inst_executed.sum $D/time_steps_v2 --2d > $R/ncu_v2.txt 2>&1
tar czf $OUT/r2.tgz -C $OUT r2
