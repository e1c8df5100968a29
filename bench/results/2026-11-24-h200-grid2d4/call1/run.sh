#!/bin/bash
# Call 1 of helper grid2d4 (H200): grid_perf on box r=2/r=4 tiles printed by main (main), by this
# branch's first change (a: interior tiles store without row tests) and by a with input-row order
# everywhere (g1, only kernels differing from a); ncu stall reasons of the defaults and alternatives.
export PYTHONUNBUFFERED=1
D=.device-grid2d4
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/c1 /tmp/o && tar xzf $D/c1.tgz -C /tmp/c1
for v in main a g1 main; do python3 docs/gpu-runs/grid_perf.py /tmp/c1/$v > /tmp/o/perf_$v.log 2>&1; echo "$v exit $?"; cp /tmp/c1/$v/results.csv /tmp/o/perf_$v.csv; done
M="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum"
for p in "main 305 183" "a 305 183" "g1 188 312"; do set -- $p; v=$1; shift; timeout 120 ncu --clock-control none -c 4 $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c1/$v "$@" > /tmp/o/ncu_$v.txt 2>&1; echo "ncu $v exit $?"; done
cd /tmp/o; for v in main a g1; do echo "== $v"; grep -E "^(box2|box4)" perf_$v.log | grep " rc " | awk '{printf "%-6s %-50s %6s %5s %s %s\n",$1,$3,$6,$8,$11,$12}' | sort -k1,1 -k4,4nr | awk '{c[$1]++} c[$1]<=5'; grep default perf_$v.log | awk '{printf "%-8s %-50s %6s %5s\n",$1,$3,$6,$8}'; done
grep -E "copy" perf_*.log
tar czf $OUT/c1out.tgz -C /tmp o; ls -la $OUT
