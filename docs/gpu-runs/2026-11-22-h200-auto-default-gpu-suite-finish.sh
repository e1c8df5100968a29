#!/usr/bin/env bash
# With distribution = auto the default: the GPU-suite test the first run's 500 s timeout cut
# (n = 2^31 + 4099, the catalogue's box7 now in the cost model's distribution) and the misuse
# tests with their stencil pinned to round_robin.
L=$OUT/finish.log
echo "# $(cat .device-bin/HEAD), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), started $(date -u)" > $L
run() { echo "===== $*" >> $L; local t=$1; shift; timeout $t "$@" >> $L 2>&1; echo "exit $? : $*" >> $L; }
run 200 .device-bin/tests/test-gpu an_input_longer_than_2_pow_31 --include-ignored --nocapture
run 60 .device-bin/tests/test-gpu_misuse --include-ignored --nocapture
echo "# finished $(date -u)" >> $L
grep -E "^exit|n = |test result" $L
