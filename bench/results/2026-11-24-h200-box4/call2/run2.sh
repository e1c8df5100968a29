#!/bin/bash
# Call 2 of helper box4 (H200): branch box4 (2D edge tiles load vectors under the rule along x)
# against main 07d9e25. Correctness first, side by side (the 480 printed 2D/3D cases of the
# branch bit for bit; memcheck on the 36 printed 2D window/granule cases with rows of whole
# vectors, every boundary), then the timings alone: probe2.py (main's and the branch's box r = 4
# default, alternating, bit-exact against a CuPy reference), ncu instruction counts of both, and
# bench --grid of both binaries on the 2D stencils (peers once), then box r = 4 alone again.
set -uo pipefail
D=.device-box4
O=/tmp/o; mkdir -p $O
# After every step: everything so far into one archive (a call returns at most 8 files, and what
# is under $OUT when a call is cut short).
save() { cp $O/summary.log $OUT/summary.log; tar czf $OUT/box4_call2.tgz -C /tmp o $(cd /tmp && ls -d g_main g_new g4_main g4_new 2>/dev/null) 2>/dev/null; }
{ date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } | tee $O/summary.log
for b in bench_main bench_new; do python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' $D/$b.xz /tmp/$b && chmod +x /tmp/$b; done
mkdir -p /tmp/cases /tmp/sub && tar xzf $D/cases.tgz -C /tmp/cases
cp $D/sub_index.txt /tmp/sub/index.txt
for k in $(awk '{print $1}' /tmp/sub/index.txt); do cp /tmp/cases/$k.ptx /tmp/cases/$k.want /tmp/sub/; done
(timeout 150 python3 docs/gpu-runs/grid_cases.py /tmp/cases > $O/cases.log 2>&1; echo "cases exit $? ($(date -u +%T))" >> $O/summary.log) &
(timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 docs/gpu-runs/grid_cases.py /tmp/sub > $O/memcheck.log 2>&1; echo "memcheck exit $? ($(date -u +%T))" >> $O/summary.log) &
wait
save
timeout 45 python3 $D/probe2.py > $O/probe2.log 2>&1; echo "probe2 exit $? ($(date -u +%T))" >> $O/summary.log
save
timeout 45 ncu --clock-control none --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active -k regex:rc_default python3 $D/probe2.py ncu > $O/ncu.txt 2>&1; echo "ncu exit $? ($(date -u +%T))" >> $O/summary.log
save
S=box2d_r4,box2d_r2,star2d_r4,star2d_r1,star2d_r2,box2d_r1
timeout 60 python3 bench/peers.py --grid /tmp/peers.csv --stencils $S > $O/peers.log 2>&1; echo "peers exit $? ($(date -u +%T))" >> $O/summary.log
for v in main new; do timeout 110 /tmp/bench_$v --grid --stencils $S --out /tmp/g_$v --peers /tmp/peers.csv > $O/bench_$v.log 2>&1; echo "bench $v exit $? ($(date -u +%T))" >> $O/summary.log; save; done
for v in main new; do timeout 40 /tmp/bench_$v --grid --stencils box2d_r4 --type f32 --out /tmp/g4_$v --peers /tmp/peers.csv > $O/bench4_$v.log 2>&1; echo "bench4 $v exit $? ($(date -u +%T))" >> $O/summary.log; save; done
grep -E "cases,|FAIL|ERROR SUMMARY|round|inst_executed|Duration|issue_active|warps_active" $O/cases.log $O/memcheck.log $O/probe2.log $O/ncu.txt | tail -40
grep -hE "register_cache_default|default" /tmp/g_main/summary.md /tmp/g_new/summary.md 2>/dev/null | head -30
cat $O/summary.log
