#!/bin/bash
# Call 2 of helper grid2d4 (H200): the 480 printed 2D/3D cases of this branch bit-exact; bench --grid
# A/B, main's binary (5a00417) against this branch's, alternating, two runs each.
export PYTHONUNBUFFERED=1
D=.device-grid2d4
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c2 /tmp/bin /tmp/g && tar xzf $D/cases.tgz -C /tmp/c2
for b in bench_main bench_new; do python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $D/$b.xz /tmp/bin/$b && chmod +x /tmp/bin/$b; done
python3 docs/gpu-runs/grid_cases.py /tmp/c2/cases_new > /tmp/g/cases.log 2>&1; echo "cases exit $?"; tail -2 /tmp/g/cases.log
python3 bench/peers.py --grid /tmp/peers.csv > /tmp/g/peers.log 2>&1; echo "peers exit $?"
S=box2d_r2,box2d_r4,star2d_r1,box2d_r1,star2d_r2,star2d_r4
i=0; for b in bench_main bench_new bench_main bench_new; do i=$((i+1)); mkdir -p /tmp/g/$i-$b; /tmp/bin/$b --grid --out /tmp/g/$i-$b --peers /tmp/peers.csv --stencils $S > /tmp/g/$i-$b/bench.log 2>&1; echo "$i $b exit $?"; grep -E "^\| (box2d|star2d)" /tmp/g/$i-$b/summary.md | awk -F'|' '{print $2,$3,$7}'; grep -ciE "mismatch|not bit" /tmp/g/$i-$b/bench.log; done
tar czf $OUT/c2out.tgz -C /tmp g; ls -la $OUT
