#!/usr/bin/env bash
# overlap (branch overlap): a split 2D fused launch's edge kernel on a side stream beside the
# interior kernel. Run from the repository root on an H200: bash .device-overlap/run.sh
set -u
D=.device-overlap
R=$OUT/overlap
mkdir -p "$R"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$R/device.txt" 2>&1
date -u >> "$R/device.txt"
"$D/gpu_steps" --test-threads=1 > "$R/gpu_steps.log" 2>&1; echo "rc=$?" >> "$R/gpu_steps.log"
"$D/cudarc" --test-threads=1 > "$R/cudarc.log" 2>&1; echo "rc=$?" >> "$R/cudarc.log"
"$D/time_steps" --sweep > "$R/sweep.log" 2>&1; echo "rc=$?" >> "$R/sweep.log"
ncu --kernel-name regex:rc_heat2d_steps --launch-skip 4 --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats "$D/time_steps" --steps 24 --check-shape 1024x1024 > "$R/ncu.txt" 2>&1
tar -C "$OUT" -czf "$OUT/overlap.tar.gz" overlap && rm -rf "$R"
