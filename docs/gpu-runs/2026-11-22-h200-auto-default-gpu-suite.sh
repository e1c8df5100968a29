#!/usr/bin/env bash
# The GPU suite and every example with distribution = auto the default (uncommitted tree).
L=$OUT/suite.log
echo "# $(cat .device-bin/HEAD), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), started $(date -u)" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
run 500 .device-bin/tests/test-gpu --include-ignored --nocapture
for t in test-gpu_misuse test-runtime lib-rc_runtime; do run 60 .device-bin/tests/$t --include-ignored --nocapture; done
for e in quickstart box heat nonlinear explain cust_interop; do run 60 .device-bin/examples/$e; done
echo "# finished $(date -u)" >> $L
grep -E "^exit|launches checked|test result|check:" $L
