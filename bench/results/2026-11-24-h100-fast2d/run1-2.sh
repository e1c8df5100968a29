# The scripts of runs 1 and 2, as run (run 3's is run3.sh). Each ran from the root of a copy of
# the repository with the carried folder .device-fast2d holding the stripped, gzipped binaries.
# Run 1 (binaries: time_steps and the gpu_steps test, release, of the working tree described in
# README.md), invoked as `bash .device-fast2d/run.sh tests`:
set -uo pipefail
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd .device-fast2d
for f in *.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done
echo "== examples/time_steps --sweep"
./time_steps --sweep; echo "exit $?"
if [ "${1:-}" = tests ]; then echo "== gpu_steps"; timeout 150 ./gpu_steps --include-ignored 2>&1 | tail -15; echo "exit $?"; fi

# Run 2 (binaries time_steps_carry and time_steps_rename, the two window schemes), invoked as
# `bash .device-fast2d/run.sh`:
#   for v in carry rename; do
#     echo "== $v: time_steps --sweep --n 1048576"
#     ./time_steps_$v --sweep --n 1048576; echo "exit $?"
#   done
#   for v in carry rename; do
#     echo "== ncu $v rc_heat2d_block128_steps"
#     timeout 100 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
#       --section Occupancy --section LaunchStats -k regex:rc_heat2d_block128_steps --launch-skip 2 -c 1 \
#       ./time_steps_$v --sweep --n 1048576 --steps 16 2>&1 | grep -v "^heat\|^fuse\|^nine" | tail -95
#   done
