#!/usr/bin/env bash
# planes3d3, last GPU call (H200): the branch's 480 printed 2D/3D cases bit for bit against the
# emulation; bench --grid of the 3D stencils, main's binary and the branch's in the same call;
# the staged kernels of main and the branch (and two variants) timed side by side; memcheck of
# the branch's printed staged-plane cases of 3 to 6 planes.
set -uo pipefail
D=.device-planes3d3
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2" && chmod +x "$2"; }
unxz $D/bench_main.xz /tmp/bench_main && unxz $D/bench_new.xz /tmp/bench_new
tar xzf $D/cases_new.tgz -C /tmp
timeout 150 python3 $D/grid_cases.py /tmp/cases_new > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -1 $OUT/cases.log; grep -E "^FAIL" $OUT/cases.log | head -5
S=star3d_r1,box3d_r1,star3d_r2,box3d_r2
step timeout 150 /tmp/bench_main --grid --stencils $S --out /tmp/grid_main > $OUT/bench_main.log 2>&1
step timeout 150 /tmp/bench_new --grid --stencils $S --out /tmp/grid_new > $OUT/bench_new.log 2>&1
paste -d'\n' <(grep -E "^\[" $OUT/bench_main.log | sed 's/^/main  /') <(grep -E "^\[" $OUT/bench_new.log | sed 's/^/new   /') | cut -c1-190
timeout 60 python3 $D/exp.py $D m410,n410,g410,m432,n432,b432,nb432,m476,n476,m498,n498,m564,n564 default > $OUT/exp.log 2>&1; echo "exp exit $?"; cat $OUT/exp.log
mkdir -p /tmp/casesp && grep "planes(4)" /tmp/cases_new/index.txt | head -24 > /tmp/casesp/index.txt && for k in $(awk '{print $1}' /tmp/casesp/index.txt); do ln -sf /tmp/cases_new/$k.ptx /tmp/cases_new/$k.want /tmp/casesp/; done
step timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 $D/grid_cases.py /tmp/casesp > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|cases," $OUT/memcheck.log | tail -3
cp /tmp/grid_main/results.csv $OUT/grid_main.csv 2>/dev/null; cp /tmp/grid_new/results.csv $OUT/grid_new.csv 2>/dev/null
echo "exit status: $status"
cd $OUT && tar czf call3.tgz *.log *.csv && rm -f *.log *.csv
