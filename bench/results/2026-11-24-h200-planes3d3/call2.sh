#!/usr/bin/env bash
# planes3d3, second GPU call (H200): carveout, blocks per SM and fetch cache operators against rc's
# staged-plane tiles (exp.py as committed, less the n*/g410/b432/nb432 kernels added for call 3);
# ncu of rc's star r1 4x4 tile under three launch settings, of its 4-block bound and of heads and tails.
set -uo pipefail
D=.device-planes3d3
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
(true; echo skipped > $OUT/nvcc.log) &
NV=$!
timeout 200 python3 $D/exp.py $D > $OUT/exp.log 2>&1; echo "exp exit $?"; cat $OUT/exp.log
wait $NV; tail -1 $OUT/nvcc.log

M=launch__shared_mem_config_size,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__waves_per_multiprocessor,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__m_xbar2l1tex_read_sectors.sum,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread
R="regex:smsp__average_warps_issue_stalled_(long_scoreboard|barrier|short_scoreboard|mio_throttle|lg_throttle|wait|not_selected|selected|math_pipe_throttle|dispatch_stall|no_instruction|drain|membar|branch_resolving|imc_miss|sleeping|tex_throttle|misc)_per_issue_active\.ratio"
for c in "m410 default" "m410 c57" "m410 b4" "m414 default" "h410 default"; do
  set -- $c
  timeout 60 ncu --kernel-name k --launch-count 1 --metrics $M,$R python3 $D/exp.py $D one $1 $2 > $OUT/ncu_$1_$2.txt 2>&1
  echo "== ncu $1 $2"; grep -E "^  *(smsp__|l1tex__|dram__|lts__|sm__|gpu__|launch__)" $OUT/ncu_$1_$2.txt | awk '$NF != "0" && $NF != "0.00"' | head -40
done


cd $OUT && tar czf call1.tgz *.log *.txt && rm -f *.log *.txt
