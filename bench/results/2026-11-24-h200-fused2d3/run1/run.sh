#!/bin/bash
# fused2d3 call 1: v1 (2D/3D x rule by bitwise masks computed once per edge strip) vs main.
D=.device-fused2d3; cd $D && gunzip -kf *.gz && chmod +x time_steps_main time_steps_v1 gpu_steps_v1 && cd ..
R=$OUT/r1; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
(cd $D && ./gpu_steps_v1 --test-threads 1) > $R/gpu_steps.log 2>&1; echo "gpu_steps rc=$?" >> $R/gpu_steps.log
for i in 1 2; do
  for b in main v1; do echo "== $b run $i"; $D/time_steps_$b --2d --sweep; done
done > $R/sweep.log 2>&1
for b in main v1; do
  timeout 150 ncu --kernel-name regex:heat2d_steps --launch-skip 204 --launch-count 2 --section SpeedOfLight --section LaunchStats --section Occupancy --metrics gpu__time_duration.sum,smsp__inst_executed.sum $D/time_steps_$b --2d > $R/ncu_$b.txt 2>&1
done
tar czf $OUT/r1.tgz -C $OUT r1
