#!/usr/bin/env bash
# compute-sanitizer, every tool, over the GPU suite (every 4th sweep pattern, lengths up to 4099)
# on the sums-from-zero code generator.
L=$OUT/2026-11-22-h200-zero-start-compute-sanitizer-suite.log
export RC_GPU_SAMPLE=4
S="compute-sanitizer --error-exitcode 9 --print-limit 20"
echo "# compute-sanitizer on the sums-from-zero code ($(cat .device-bin/HEAD), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)), started $(date -u); RC_GPU_SAMPLE=$RC_GPU_SAMPLE" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
for tool in memcheck racecheck synccheck initcheck; do
  run 140 $S --tool $tool .device-bin/tests/test-gpu --include-ignored --nocapture
done
echo "# finished $(date -u)" >> $L
grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY|launches checked" $L
