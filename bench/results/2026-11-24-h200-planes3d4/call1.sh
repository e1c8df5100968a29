#!/usr/bin/env bash
# planes3d4, call 1 (H200), all in one: (1) the probe's star r = 1 tile (4 warps x 4 rows) with one
# of rc's habits at a time and rc's printed tile (main's write_perf 410, edited; the branch's) in
# one harness (bench/probes/staged3d_ab.cu, built with nvcc 13.5 here); (2) the branch's 480
# printed 2D/3D cases bit for bit; (3) bench --grid of the 3D stencils, main's binary and the
# branch's; (4) ncu of the harness's kernels, each launched once; (5) memcheck of the branch's 72
# printed staged-plane cases.
# (Carried in .device-planes3d4/: staged3d_ab, ptx/410.ptx = main's write_perf 410, st_end.ptx and
# no_edge.ptx = variants.py of it, new.ptx = the branch's 410 as printed at 7d5b0ce; bench_main.xz /
# bench_new.xz = `cargo build --release --example bench` at main 5a00417 / the branch, stripped;
# cases_new.tgz = RC_GRID_CASES of the branch; grid_cases.py = docs/gpu-runs/grid_cases.py.)
set -uo pipefail
D=.device-planes3d4
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
B=/tmp/staged3d_ab; cp $D/staged3d_ab $B; chmod +x $B
A="rc410=$D/ptx/410.ptx rc410+st_end=$D/ptx/st_end.ptx rc410+no_edge!=$D/ptx/no_edge.ptx rc410_new=$D/ptx/new.ptx"
if ! timeout 120 $B $A > $OUT/ab.log 2>&1; then
  echo "local build failed to run:"; tail -3 $OUT/ab.log
  (cd $D && nvcc -O3 -arch=sm_90 -std=c++17 staged3d_ab.cu -o /tmp/staged3d_ab_dev) && B=/tmp/staged3d_ab_dev && timeout 120 $B $A > $OUT/ab.log 2>&1
fi
cat $OUT/ab.log
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2" && chmod +x "$2"; }
unxz $D/bench_main.xz /tmp/bench_main && unxz $D/bench_new.xz /tmp/bench_new
tar xzf $D/cases_new.tgz -C /tmp
timeout 150 python3 $D/grid_cases.py /tmp/cases_new > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -1 $OUT/cases.log; grep -E "^FAIL" $OUT/cases.log | head -5
S=star3d_r1,box3d_r1,star3d_r2,box3d_r2
step timeout 120 /tmp/bench_main --grid --stencils $S --out /tmp/grid_main > $OUT/bench_main.log 2>&1
step timeout 120 /tmp/bench_new --grid --stencils $S --out /tmp/grid_new > $OUT/bench_new.log 2>&1
paste -d'\n' <(grep -E "^\[" $OUT/bench_main.log | sed 's/^/main  /') <(grep -E "^\[" $OUT/bench_new.log | sed 's/^/new   /') | cut -c1-190
cp /tmp/grid_main/results.csv $OUT/grid_main.csv 2>/dev/null; cp /tmp/grid_new/results.csv $OUT/grid_new.csv 2>/dev/null
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min
timeout 120 ncu --print-units base --metrics $M $B --once $A > $OUT/ncu.txt 2>&1; echo "ncu exit $?"
# (then the table parser of call2.sh)
mkdir -p /tmp/casesp && grep "planes(" /tmp/cases_new/index.txt > /tmp/casesp/index.txt && for k in $(awk '{print $1}' /tmp/casesp/index.txt); do ln -sf /tmp/cases_new/$k.ptx /tmp/cases_new/$k.want /tmp/casesp/; done
step timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 python3 $D/grid_cases.py /tmp/casesp > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|cases," $OUT/memcheck.log | tail -3
echo "exit status: $status"
cd $OUT && tar czf call1.tgz *.log *.txt *.csv && rm -f *.log *.txt *.csv
