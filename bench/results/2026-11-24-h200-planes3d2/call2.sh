#!/usr/bin/env bash
# planes3d2, second GPU call (H200): the ring's heads and tails (conflict-free window-edge reads).
# (1) every printed 3D case bit-exact against the emulation; (2) test-gpu_grid; (3) memcheck of
# the printed staged-plane cases; (4) rc's 3D tiles timed; (5) the probe's sides variant and
# baselines; (6) ncu of rc's r = 1 staged tiles and the probe's.
set -uo pipefail
D=.device-planes3d2
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
cd $D && tar xzf cases3.tgz && gunzip -kf test-gpu_grid.gz && chmod +x test-gpu_grid && mkdir -p casesp && grep "planes(4)" cases3/index.txt > casesp/index.txt && for k in $(awk '{print $1}' casesp/index.txt); do ln -sf ../cases3/$k.ptx ../cases3/$k.want casesp/; done && cd ..
(nvcc -O3 -arch=sm_90 -std=c++17 -I$D $D/staged3d2.cu -o /tmp/staged3d2 > $OUT/nvcc.log 2>&1; echo "nvcc exit $?" >> $OUT/nvcc.log) &
NV=$!
timeout 150 python3 $D/grid_cases.py $D/cases3 > $OUT/cases.log 2>&1; echo "grid_cases exit $?"; tail -2 $OUT/cases.log; grep -i "fail\|differ" $OUT/cases.log | head -5
step timeout 100 $D/test-gpu_grid > $OUT/gpu_grid.log 2>&1; grep "test result\|FAILED\|panicked" $OUT/gpu_grid.log | head
timeout 150 python3 $D/grid_perf_rc.py $D/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; grep -v "^copy" $OUT/perf.log; cp $D/perf/results.csv $OUT/perf.csv
wait $NV; tail -1 $OUT/nvcc.log
(timeout 60 /tmp/staged3d2 "vx=4 reg ahead=0 RY=4 warps=4 minb=1"; timeout 60 /tmp/staged3d2 "vx=4 reg ahead=0 RY=4 warps=4 minb=4"; timeout 90 /tmp/staged3d2 sides) > $OUT/probe.log 2>&1; cat $OUT/probe.log
M=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread
S="--section WarpStateStats --metrics $M"
for d in ncu_rc_box1_p4 ncu_rc_star1_p4 ncu_rc_box1_p4r2; do
  timeout 60 ncu --kernel-name k --launch-count 1 $S python3 $D/grid_perf_rc.py $D/$d > $OUT/$d.txt 2>&1
  echo "== $d"; grep -E "^  *(smsp__|l1tex__|dram__|lts__|sm__|gpu__|launch__)|Warp Cycles Per Issued" $OUT/$d.txt | head -20
done
f="box1    vx=4 sides ahead=0 RY=4 warps=4 minb=1"
timeout 60 ncu --kernel-name regex:staged --launch-skip 1 --launch-count 1 $S /tmp/staged3d2 "$f" > $OUT/ncu_probe_box1_sides.txt 2>&1
echo "== probe $f"; grep -E "bit-exact|DIFFERS|^  *(smsp__|l1tex__|dram__|lts__|sm__|gpu__|launch__)" $OUT/ncu_probe_box1_sides.txt | head -20
step timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 python3 $D/grid_cases.py $D/casesp > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|cases," $OUT/memcheck.log | tail -3
echo "exit status: $status"
cd $OUT && tar czf call2.tgz *.log *.csv *.txt && rm -f *.log *.txt *.csv
