#!/usr/bin/env bash
# Session 2026-11-22 (fourth), first call: the committed code (HEAD) on the GPU before any change.
L=$OUT/verify.log
S="compute-sanitizer --error-exitcode 9 --print-limit 20"
echo "# HEAD $(cat .device-bin/HEAD) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), started $(date -u)" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
RC_GPU_SAMPLE=4 run 200 .device-bin/tests/test-gpu --include-ignored --nocapture
for t in test-gpu_misuse test-runtime lib-rc_runtime; do run 60 .device-bin/tests/$t --include-ignored --nocapture; done
for e in quickstart box heat nonlinear explain cust_interop; do run 60 .device-bin/examples/$e; done
for tool in memcheck initcheck; do
  for e in quickstart box nonlinear explain; do run 60 $S --tool $tool .device-bin/examples/$e; done
  run 60 $S --tool $tool .device-bin/examples/heat --n 100000
  run 60 $S --tool $tool .device-bin/examples/cust_interop --n 100000
done
echo "# sanitizer done $(date -u)" >> $L
run 150 .device-bin/examples/bench --type f32 --radii 32 --out $OUT/bench-r32
(cd $OUT && tar czf bench-r32.tgz bench-r32 && rm -rf bench-r32)
echo "# finished $(date -u)" >> $L
grep -E "^exit|ERROR SUMMARY|test result|check:|launches" $L | head -80
