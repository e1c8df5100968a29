#!/bin/bash
# Call 3 of helper grid2d4 (H200): bench --grid of this branch (new: row tests gone, box r=2 by input
# rows) against new2 (new without the two-vector preference of 2D tiles), alternating, two runs each;
# grid_perf on the one- and two-vector star/box r=1,2 tiles of new under every bound.
export PYTHONUNBUFFERED=1
D=.device-grid2d4
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c3 /tmp/bin /tmp/g && tar xzf $D/c3.tgz -C /tmp/c3
for b in bench_new bench_new2; do python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $D/$b.xz /tmp/bin/$b && chmod +x /tmp/bin/$b; done
S=star2d_r1,box2d_r1,star2d_r2,box2d_r2,box2d_r4
i=0; for b in bench_new bench_new2 bench_new bench_new2; do i=$((i+1)); mkdir -p /tmp/g/$i-$b; /tmp/bin/$b --grid --out /tmp/g/$i-$b --stencils $S > /tmp/g/$i-$b/bench.log 2>&1; echo "$i $b exit $?"; grep -E "bit-exact" /tmp/g/$i-$b/bench.log | grep -c -v "bit-exact;"; grep -E "^\| (box2d|star2d)" /tmp/g/$i-$b/summary.md | awk -F'|' '{print $2,$3,$7,$8}'; done
python3 docs/gpu-runs/grid_perf.py /tmp/c3/b > /tmp/g/perf_b.log 2>&1; echo "perf exit $?"; cp /tmp/c3/b/results.csv /tmp/g/perf_b.csv
grep " rc " /tmp/g/perf_b.log | awk '{printf "%-6s %-50s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}'
tar czf $OUT/c3out.tgz -C /tmp g; ls -la $OUT
