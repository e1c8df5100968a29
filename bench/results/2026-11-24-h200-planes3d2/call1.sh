#!/usr/bin/env bash
# planes3d2, first GPU call (H200): the second staged-plane probe (8 outputs per thread, bulk-copied
# rows) and rc's 3D staged tiles (planes(4), planes(8)) timed; ncu L1-pipe counts of both.
set -uo pipefail
D=.device-planes3d2
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
(nvcc -O3 -arch=sm_90 -std=c++17 $D/staged3d2.cu -o /tmp/staged3d2 > $OUT/nvcc.log 2>&1; echo "nvcc exit $?") &
NV=$!
timeout 150 python3 $D/grid_perf_rc.py $D/perf > $OUT/perf.log 2>&1; echo "perf exit $?"; cat $OUT/perf.log; cp $D/perf/results.csv $OUT/perf.csv
wait $NV; tail -3 $OUT/nvcc.log
timeout 150 /tmp/staged3d2 > $OUT/probe.log 2>&1; echo "probe exit $?"; cat $OUT/probe.log
M=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread
S="--section WarpStateStats --metrics $M"
for f in "star1   vx=4 reg ahead=0 RY=4 warps=4 minb=1" "box1    vx=4 reg ahead=0 RY=4 warps=4 minb=4" "box1    vx=8 reg ahead=0 RY=2 warps=4 minb=1" "star1   vx=4 tma ahead=1 RY=4 warps=4" "box1    vx=4 tma ahead=1 RY=4 warps=4" "box2    vx=8 reg ahead=0 RY=2 warps=8"; do
  n=$(echo "$f" | tr -s ' =' '__'); timeout 60 ncu --kernel-name regex:staged --launch-skip 1 --launch-count 1 $S /tmp/staged3d2 "$f" > $OUT/ncu_probe_$n.txt 2>&1
  echo "== probe $f"; grep -E "^  *(smsp__|l1tex__|dram__|lts__|sm__|gpu__|launch__)|Stall (Long|Short|MIO|LG|Barrier|Wait|Math|Not)" $OUT/ncu_probe_$n.txt | head -30
done
for d in ncu_rc_star1_p4 ncu_rc_box2_default ncu_rc_box1_p8r2; do
  timeout 60 ncu --kernel-name k --launch-count 1 $S python3 $D/grid_perf_rc.py $D/$d > $OUT/$d.txt 2>&1
  echo "== $d"; grep -E "^  *(smsp__|l1tex__|dram__|lts__|sm__|gpu__|launch__)" $OUT/$d.txt | head -20
done
cd $OUT && tar czf call1.tgz *.log *.csv *.txt && rm -f *.log *.txt *.csv
