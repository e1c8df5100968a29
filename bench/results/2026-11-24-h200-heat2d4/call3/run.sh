#!/bin/bash
# heat2d4 call 3: main against v2 (the branch at 8418a91) and v3i (v2 plus the interior strips'
# windows in 2 * ry + 1 register rows), each twice interleaved, on 2D heat and a 2D 5-point
# average (jacobi2d, added to the example in all three); memcheck of v3i's 2D gpu_steps test.
D=.device-heat2d4; cd $D && gunzip -kf *.gz && chmod +x time_steps_* test-gpu_steps_* && cd ..
R=$OUT/c3; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $R/device.txt 2>&1
date -u > $R/times.txt
for i in 1 2; do for b in main v2 v3i; do echo "== $b run $i"; $D/time_steps_$b --2d; done; done > $R/ab.log 2>&1
date -u >> $R/times.txt
(cd $D && timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps_v3i --test-threads 1 equal_run_cpu_steps_in_2d) > $R/memcheck_v3i_2d.log 2>&1; echo "rc=$?" >> $R/memcheck_v3i_2d.log
date -u >> $R/times.txt
tar czf $OUT/c3.tgz -C $OUT c3
