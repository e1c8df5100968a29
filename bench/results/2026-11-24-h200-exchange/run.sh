#!/usr/bin/env bash
# 9-tap exchange in vector accesses: correctness, then old vs new time_steps --1d alternated, with
# the hand-written probe's same tile in the same call. Logs tarred into $OUT/nine.tgz.
set -uo pipefail
o=/tmp/nine; mkdir -p $o
cd .device-nine
for f in *.xz; do python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f" && chmod +x "${f%.xz}"; done
{ date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $o/summary.log
s() { local n=$1; shift; ( "$@" ) > $o/$n.log 2>&1; echo "$n exit $?" >> $o/summary.log; }
s gpu_steps ./gpu_steps --include-ignored --nocapture
s cudarc ./cudarc --include-ignored --nocapture
s memcheck compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --nocapture
(cd ../bench/probes && nvcc -O3 -arch=sm_90 -o /tmp/fused1d fused1d.cu -lcuda) > $o/nvcc.log 2>&1
s probe1 /tmp/fused1d tiles
s old1 ./time_steps_old --1d
s new1 ./time_steps_new --1d
s old2 ./time_steps_old --1d
s new2 ./time_steps_new --1d
s probe2 /tmp/fused1d tiles
cat $o/summary.log
grep -h "nine\|heat\|copy" $o/old*.log $o/new*.log $o/probe*.log
tar czf $OUT/nine.tgz -C /tmp nine
