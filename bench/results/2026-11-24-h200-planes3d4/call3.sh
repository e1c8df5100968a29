#!/usr/bin/env bash
# planes3d4, call 3 (H200): (1) bench --grid of the 3D stencils, main's binary and the branch's
# final one (star r = 1 staged by default: 4 warps x 4 rows under 4 blocks) in the same call;
# (2) the harness (bench/probes/staged3d_ab.cu): the probe, main's and the branch's staged star
# r = 1 tiles, then the branch's box r = 1 tiles (--box); (3) memcheck of the new star r = 1
# default (write_perf 414, byte-identical to the default 366) launched once at 512^3.
set -uo pipefail
D=.device-planes3d4
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2" && chmod +x "$2"; }
unxz $D/bench_main.xz /tmp/bench_main && unxz $D/bench_new3.xz /tmp/bench_new
S=star3d_r1,box3d_r1,star3d_r2,box3d_r2
step timeout 120 /tmp/bench_main --grid --stencils $S --out /tmp/grid_main > $OUT/bench_main.log 2>&1
step timeout 120 /tmp/bench_new --grid --stencils $S --out /tmp/grid_new > $OUT/bench_new.log 2>&1
paste -d'\n' <(grep -E "default|copy " $OUT/bench_main.log | grep -v "^main\|^new" | sed 's/^/main  /') <(grep -E "default|copy " $OUT/bench_new.log | sed 's/^/new   /') | cut -c1-200
cp /tmp/grid_main/results.csv $OUT/grid_main.csv 2>/dev/null; cp /tmp/grid_new/results.csv $OUT/grid_new.csv 2>/dev/null
B=/tmp/staged3d_ab; cp $D/staged3d_ab $B; chmod +x $B
spec() { awk -v k=$2 -v d=$D '$1 == k {printf "%s=%s/ptx/%s%s.ptx:%s:%s:%s", n, d, p, $1, $2, $3, $4}' p=$1 n=$1$2 $D/ptx/index.txt; }
A="$(spec m 410)"; for k in 414 410 421 413 411; do A="$A $(spec n $k)"; done
timeout 100 $B --probe-only $A > $OUT/ab_star.log 2>&1; echo "harness exit $?"; cat $OUT/ab_star.log
A=""; for k in 432 476 478 480 482 483 487; do A="$A $(spec n $k)"; done
timeout 100 $B --box $A > $OUT/ab_box.log 2>&1; echo "harness exit $?"; cat $OUT/ab_box.log
step timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B --once --probe-only $(spec n 414) > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|launch" $OUT/memcheck.log | tail -3
echo "exit status: $status"
cd $OUT && tar czf call3.tgz *.log *.csv && rm -f *.log *.csv
