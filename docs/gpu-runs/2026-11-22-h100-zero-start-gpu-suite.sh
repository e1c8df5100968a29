#!/usr/bin/env bash
# The GPU suite (every 4th sweep pattern) and every example on an H100, the binaries of the H200 runs.
L=$OUT/suite.log
echo "# tree on $(cat .device-bin/HEAD) + zero_start, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), started $(date -u)" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
RC_GPU_SAMPLE=4 run 300 .device-bin/tests/test-gpu --include-ignored --nocapture
for t in test-gpu_misuse test-runtime lib-rc_runtime; do run 60 .device-bin/tests/$t --include-ignored --nocapture; done
for e in quickstart box heat nonlinear explain cust_interop; do run 60 .device-bin/examples/$e; done
echo "# finished $(date -u)" >> $L
grep -E "^exit|launches checked|test result|check:" $L
