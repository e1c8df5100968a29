#!/usr/bin/env bash
# Lead, session 6, call 2: branch terms (shared terms, 48 words per block-tile lane at r >= 4):
# gpu_steps + memcheck, time_steps --1d --sweep (9-tap in blocks of 128/256/512), 40 and 56 words, ncu of the 2^26 9-tap.
set -uo pipefail
cd .device-lead; for f in *.gz; do gunzip -kf $f; done; chmod +x time_steps_* test-gpu_steps
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/r
echo "== gpu_steps"; ./test-gpu_steps --include-ignored 2>&1 | tail -4 | tee $OUT/r/gpu_steps.log
echo "== memcheck gpu_steps"; timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 ./test-gpu_steps 2>&1 | tail -3 | tee $OUT/r/memcheck.log; echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/r/memcheck.log
echo "== time_steps_terms --1d --sweep"; ./time_steps_terms --1d --sweep 2>&1 | tee $OUT/r/steps_terms_sweep.log
for b in k40 k56; do echo "== time_steps_$b --1d"; ./time_steps_$b --1d 2>&1 | tee $OUT/r/steps_$b.log; done
ncu --launch-skip 12 -c 1 -k regex:^rc_nine_tap_steps$ --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --section InstructionStats --metrics sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum ./time_steps_terms --1d --steps 200 > $OUT/r/ncu.txt 2>&1
grep -E "Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Active" $OUT/r/ncu.txt
cd $OUT && tar czf lead2.tgz r && rm -rf r
