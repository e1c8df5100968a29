#!/bin/bash
# Call 2 of helper grid2d2: the 2D grid benchmark through #[stencil] with the peers (CuPy,
# PyTorch, copy) in the same run; the GPU grid suite (printed catalogue through the runtime) and
# memcheck on its sample; then 2D blocks of 16 and 32 stacked warps (exploration, printed tiles).
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
B=/tmp/bin; mkdir -p $B; for f in .device-grid2d2/bin/*.gz; do gunzip -c "$f" > $B/$(basename "${f%.gz}"); chmod +x $B/$(basename "${f%.gz}"); done
mkdir -p /tmp/c2 && tar xzf .device-grid2d2/c2.tgz -C /tmp/c2
S=star2d_r1,box2d_r1,star2d_r2,box2d_r2,star2d_r4,box2d_r4
mkdir -p $OUT/grid
python3 bench/peers.py --grid $OUT/grid/peers.csv --stencils $S > $OUT/grid/peers.log 2>&1; echo "peers exit $?"
step $B/bench --grid --out $OUT/grid --peers $OUT/grid/peers.csv --stencils $S > $OUT/grid/bench.log 2>&1
tail -14 $OUT/grid/bench.log
step $B/test-gpu_grid grid_catalogue --nocapture > $OUT/suite.log 2>&1
step compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 $B/test-gpu_grid grid_catalogue >> $OUT/suite.log 2>&1
grep -E "^==|FAILED|test result|ERROR SUMMARY|bit-exact|checked|launches" $OUT/suite.log | head -20
python3 docs/gpu-runs/grid_perf.py /tmp/c2/perf > $OUT/blocks.log 2>&1; echo "blocks exit $?"; cp /tmp/c2/perf/results.csv $OUT/blocks.csv
grep " rc " $OUT/blocks.log | awk '{printf "%-6s %-56s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}'
(cd $OUT && tar czf grid.tgz grid && rm -rf grid)
echo "exit status: $status"
