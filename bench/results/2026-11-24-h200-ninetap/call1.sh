#!/usr/bin/env bash
# Lead, session 6: the 1D 9-tap fused kernel with 32 (main), 48 and 64 words per lane, and its real SM clock.
set -uo pipefail
cd .device-lead; for f in *.gz; do gunzip -kf $f; done; chmod +x time_steps_*
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/r
( nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/r/smi.csv ) & smi=$!
for b in main k48 k64 main; do echo "== time_steps_$b --1d"; ./time_steps_$b --1d 2>&1 | tee -a $OUT/r/steps_$b.log; done
kill $smi
# The 9-tap interior kernel at the clock it really runs at (no clock control), then locked (ncu's default).
for cc in none base; do
ncu --clock-control $cc -k regex:^rc_nine_tap_steps$ -c 2 --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --metrics sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_fmaheavy.sum ./time_steps_main --1d --steps 100 > $OUT/r/ncu_$cc.txt 2>&1
done
tail -5 $OUT/r/ncu_none.txt
cd $OUT && tar czf lead1.tgz r && rm -rf r
