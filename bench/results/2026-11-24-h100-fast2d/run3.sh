set -uo pipefail
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-fast2d
for f in *.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done
echo "== time_steps --sweep (branch fast2d, commit 2840bb1)"
./time_steps --sweep; echo "exit $?"
echo "== gpu_steps --include-ignored"
timeout 100 ./gpu_steps --include-ignored 2>&1 | tail -8; echo "exit $?"
echo "== compute-sanitizer memcheck: time_steps --n 65536 --steps 40 --shape 300x520"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 ./time_steps --n 65536 --steps 40 --shape 300x520 2>&1 | tail -6; echo "exit $?"
if command -v ncu >/dev/null; then
  echo "== ncu rc_heat2d_steps (the default, T = 8, 128 threads), first 8192 x 8192 launch"
  timeout 60 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats -k regex:rc_heat2d_steps --launch-skip 2 -c 1 ./time_steps --n 65536 --steps 16 2>&1 | grep -v "^heat\|^nine" | grep -v "^\s*$" | tail -75
fi
