#!/bin/bash
# Call 1 of helper grid2d3 (H200): printed 2D/3D cases of this branch bit-exact (current rule and
# the ROW_ORDER_GAIN = 1 variant); 2D box r=2/r=4 tiles (and the 2D defaults) printed by main
# (old), this branch (new) and this branch with input-row order wherever it differs (gain1),
# timed in one run; bench --grid A/B main vs this branch; ncu on the new default box r=4/r=2.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
D=.device-grid2d3
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c1 && tar xzf $D/c1.tgz -C /tmp/c1
for b in bench_main bench_new; do python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $D/$b.xz /tmp/$b && chmod +x /tmp/$b; done
python3 docs/gpu-runs/grid_cases.py /tmp/c1/cases > $OUT/cases.log 2>&1; echo "cases exit $?"; tail -1 $OUT/cases.log
python3 docs/gpu-runs/grid_cases.py /tmp/c1/cases_gain1 > $OUT/cases_gain1.log 2>&1; echo "cases_gain1 exit $?"; tail -1 $OUT/cases_gain1.log
for v in new old gain1; do python3 docs/gpu-runs/grid_perf.py /tmp/c1/$v > $OUT/$v.log 2>&1; echo "$v exit $?"; cp /tmp/c1/$v/results.csv $OUT/$v.csv; done
python3 bench/peers.py --grid /tmp/peers.csv > $OUT/peers.log 2>&1; echo "peers exit $?"
for b in bench_main bench_new bench_main bench_new; do mkdir -p /tmp/$b; /tmp/$b --grid --out /tmp/$b --peers /tmp/peers.csv --stencils box2d_r4,box2d_r2,star2d_r1,box2d_r1,star2d_r2,star2d_r4 > $OUT/$b.log 2>&1; echo "$b exit $?"; grep -E "box2d_r4|box2d_r2" /tmp/$b/summary.md | head -4; done
cp /tmp/bench_new/summary.md $OUT/summary_new.md; cp /tmp/bench_main/summary.md $OUT/summary_main.md; cp /tmp/bench_new/results.csv $OUT/results_new.csv; cp /tmp/bench_main/results.csv $OUT/results_main.csv
N4=$(awk '$6 ~ /^box4\|default/ {print $1}' /tmp/c1/new/index.txt); N2=$(awk '$6 ~ /^box2\|default/ {print $1}' /tmp/c1/new/index.txt)
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats"
timeout 100 ncu --clock-control none $S --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum -k k python3 docs/gpu-runs/grid_profile.py /tmp/c1/new $N4 $N2 > $OUT/ncu.txt 2>&1; echo "ncu exit $?"
cd $OUT; echo "--- rc 2D tiles (fraction of copy)"; for f in new old gain1; do echo "== $f"; grep -E "^(box)" $f.log | grep " rc " | awk '{printf "%-6s %-50s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}' | sort -k1,1 -k4,4nr | awk '{c[$1]++} c[$1]<=6'; grep default $f.log | awk '{printf "%-6s %-50s %6s %5s\n",$1,$3,$6,$8}'; done
tar czf $OUT/c1out.tgz *.log *.csv *.md *.txt 2>/dev/null; ls $OUT
