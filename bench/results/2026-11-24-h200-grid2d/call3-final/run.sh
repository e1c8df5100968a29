#!/bin/bash
# Call 3 of the grid2d helper (branch grid2d): the 2D grid benchmark through #[stencil] (peers in
# the same run), then the GPU checks of what changed: the runtime's stacked 2D launches (grid
# catalogue, grid methods), fused 2D steps (time_steps example, gpu_steps), memcheck on both.
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
B=/tmp/bin; mkdir -p $B; for f in .device-grid2d/*.gz; do gunzip -c "$f" > $B/$(basename "${f%.gz}"); chmod +x $B/$(basename "${f%.gz}"); done
S=star2d_r1,box2d_r1,star2d_r2,box2d_r2,star2d_r4,box2d_r4
mkdir -p $OUT/grid
python3 bench/peers.py --grid $OUT/grid/peers.csv --stencils $S > $OUT/grid/peers.log 2>&1; echo "peers exit $?"
step $B/bench --grid --out $OUT/grid --peers $OUT/grid/peers.csv --stencils $S > $OUT/grid/bench.log 2>&1
tail -22 $OUT/grid/bench.log
(cd $OUT && tar czf grid.tgz grid && rm -rf grid)
step $B/test-gpu_grid grid_catalogue --nocapture > $OUT/suite.log 2>&1
step $B/test-grid_methods --include-ignored >> $OUT/suite.log 2>&1
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 $B/test-gpu_grid grid_catalogue >> $OUT/suite.log 2>&1
step compute-sanitizer --tool memcheck --error-exitcode 9 $B/time_steps --n 65536 --steps 21 --shape 96x260 --check-shape 70x132 --shape3 12x20x68 --check-shape3 9x11x40 >> $OUT/suite.log 2>&1
step $B/time_steps > $OUT/time_steps.log 2>&1
step timeout 100 $B/test-gpu_steps --include-ignored >> $OUT/suite.log 2>&1
grep -E "^==|FAILED|test result|ERROR SUMMARY|bit-exact|checked" $OUT/suite.log | head -40
echo "exit status: $status"
