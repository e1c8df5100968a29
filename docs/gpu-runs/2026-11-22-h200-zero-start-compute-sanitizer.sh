#!/usr/bin/env bash
# compute-sanitizer on the sums-from-zero code generator: every tool on every example and the
# misuse tests; memcheck on the GPU suite (every 16th sweep pattern, lengths up to 4099).
L=$OUT/2026-11-22-h200-zero-start-compute-sanitizer.log
export RC_GPU_SAMPLE=16
S="compute-sanitizer --error-exitcode 9 --print-limit 20"
echo "# compute-sanitizer on the sums-from-zero code ($(cat .device-bin/HEAD), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)), started $(date -u); RC_GPU_SAMPLE=$RC_GPU_SAMPLE" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
run 200 $S --tool memcheck .device-bin/tests/test-gpu --include-ignored --nocapture
for tool in memcheck racecheck synccheck initcheck; do
  run 30 $S --tool $tool .device-bin/tests/test-gpu_misuse --include-ignored
  for e in quickstart box nonlinear explain; do run 40 $S --tool $tool .device-bin/examples/$e --n 100000; done
  run 40 $S --tool $tool .device-bin/examples/heat --n 100000
  run 40 $S --tool $tool .device-bin/examples/cust_interop --n 100000
done
echo "# finished $(date -u)" >> $L
grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY|launches checked" $L
