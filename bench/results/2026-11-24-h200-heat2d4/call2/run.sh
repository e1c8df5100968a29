#!/bin/bash
# heat2d4 call 2: main's time_steps against the branch's (v2: 32-bit division in the fused prologue,
# edges kernel launched over its own blocks) and an experiment (v3i: v2 plus the interior strips'
# windows in 2 * ry + 1 register rows, so ptxas need not copy each new row), each twice,
# interleaved; gpu_steps (v2 every test; memcheck of the 2D test; v3i the 2D test).
D=.device-heat2d4; cd $D && gunzip -kf *.gz && chmod +x time_steps_* test-gpu_steps_* && cd ..
R=$OUT/c2; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
date -u > $R/times.txt
for i in 1 2; do for b in main v2 v3i; do echo "== $b run $i"; $D/time_steps_$b --2d; done; done > $R/ab.log 2>&1
date -u >> $R/times.txt
(cd $D && timeout 150 ./test-gpu_steps_v2 --include-ignored --test-threads 1) > $R/gpu_steps_v2.log 2>&1; echo "rc=$?" >> $R/gpu_steps_v2.log
date -u >> $R/times.txt
(cd $D && timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps_v2 --test-threads 1 equal_run_cpu_steps_in_2d) > $R/memcheck_v2_2d.log 2>&1; echo "rc=$?" >> $R/memcheck_v2_2d.log
date -u >> $R/times.txt
(cd $D && timeout 80 ./test-gpu_steps_v3i --test-threads 1 equal_run_cpu_steps_in_2d) > $R/gpu_steps_v3i_2d.log 2>&1; echo "rc=$?" >> $R/gpu_steps_v3i_2d.log
date -u >> $R/times.txt
tar czf $OUT/c2.tgz -C $OUT c2
