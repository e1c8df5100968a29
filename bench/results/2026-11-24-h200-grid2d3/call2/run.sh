#!/bin/bash
# Call 2 of helper grid2d3 (H200): the final printer (branch head) - printed 2D/3D cases bit-exact;
# bench --grid A/B, main's binary against this branch's, alternating, twice each; the 2D defaults,
# 3D defaults and every box r=2/r=4 tile printed by main (old) and this branch (new), timed in one
# run; ncu on the new default box r=4 and r=2 tiles.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
D=.device-grid2d3
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c2 /tmp/bin && tar xzf $D/c2.tgz -C /tmp/c2
for b in bench_main bench_new; do python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $D/$b.xz /tmp/bin/$b && chmod +x /tmp/bin/$b; done
python3 docs/gpu-runs/grid_cases.py /tmp/c2/cases > $OUT/cases.log 2>&1; echo "cases exit $?"; tail -1 $OUT/cases.log
python3 bench/peers.py --grid /tmp/peers.csv > $OUT/peers.log 2>&1; echo "peers exit $?"
S=box2d_r4,box2d_r2,star2d_r1,box2d_r1,star2d_r2,star2d_r4
i=0; for b in bench_main bench_new bench_main bench_new; do i=$((i+1)); mkdir -p /tmp/g/$i-$b; /tmp/bin/$b --grid --out /tmp/g/$i-$b --peers /tmp/peers.csv --stencils $S > /tmp/g/$i-$b/bench.log 2>&1; echo "$i $b exit $?"; grep -E "^\| (box2d|star2d)" /tmp/g/$i-$b/summary.md | awk -F'|' '{print $2,$3,$7}'; done
for v in new old; do python3 docs/gpu-runs/grid_perf.py /tmp/c2/$v > /tmp/g/$v.log 2>&1; echo "$v exit $?"; cp /tmp/c2/$v/results.csv /tmp/g/$v.csv; done
N4=$(awk '$6 ~ /^box4\|default/ {print $1}' /tmp/c2/new/index.txt); N2=$(awk '$6 ~ /^box2\|default/ {print $1}' /tmp/c2/new/index.txt)
M="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
timeout 100 ncu --clock-control none $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c2/new $N4 $N2 > /tmp/g/ncu_new.txt 2>&1; echo "ncu exit $?"
timeout 60 ncu --clock-control none $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c2/old $N4 > /tmp/g/ncu_old.txt 2>&1; echo "ncu old exit $?"
cp $OUT/*.log /tmp/g/ 2>/dev/null
cd /tmp/g; echo "--- grid_perf (fraction of cudaMemcpy copy)"; for f in new old; do echo "== $f"; grep -E "^(box)" $f.log | grep " rc " | awk '{printf "%-6s %-50s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}' | sort -k1,1 -k4,4nr | awk '{c[$1]++} c[$1]<=4'; grep default $f.log | awk '{printf "%-8s %-50s %6s %5s\n",$1,$3,$6,$8}'; done
tar czf $OUT/c2out.tgz -C /tmp g; ls -la $OUT
