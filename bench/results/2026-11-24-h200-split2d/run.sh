#!/usr/bin/env bash
# split2d (branch split2d, binaries built from 1702e92 without CUDA, stripped): the 2D fused launch
# as two kernels (interior strips, then edge strips). Run from the repository root on an H200:
#   bash .device-split2d/run.sh      (writes $OUT/split2d.tar.gz)
set -u
D=.device-split2d
R=$OUT/split2d
mkdir -p "$R"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$R/device.txt" 2>&1
date -u >> "$R/device.txt"
# Correctness: 1D/2D/3D fused steps vs run_cpu_steps, every boundary, poisoned outputs; cudarc.
"$D/gpu_steps" --test-threads=1 > "$R/gpu_steps.log" 2>&1; echo "rc=$?" >> "$R/gpu_steps.log"
"$D/cudarc" --test-threads=1 > "$R/cudarc.log" 2>&1; echo "rc=$?" >> "$R/cudarc.log"
compute-sanitizer --tool memcheck "$D/gpu_steps" --test-threads=1 > "$R/memcheck.log" 2>&1; echo "rc=$?" >> "$R/memcheck.log"
# Speed: 2D heat 8192 x 8192, 1000 steps; cost model T (12) beside fuse 4/6/8/10 and 64-thread blocks.
"$D/time_steps" --sweep > "$R/sweep.log" 2>&1; echo "rc=$?" >> "$R/sweep.log"
# Where the time goes: one fused launch's two kernels (interior, then edges).
ncu --kernel-name regex:rc_heat2d_steps --launch-skip 0 --launch-count 4 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  "$D/time_steps" --steps 24 > "$R/ncu.txt" 2>&1; echo "rc=$?" >> "$R/ncu.txt"
tar -C "$OUT" -czf "$OUT/split2d.tar.gz" split2d && rm -rf "$R"
