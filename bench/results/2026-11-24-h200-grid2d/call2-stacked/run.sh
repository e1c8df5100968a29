#!/bin/bash
# Call 2 of the grid2d helper: 2D tiles with a block's warps stacked along y (this branch) against
# main's row-major numbering (same tiles, same run); 2D printed cases bit-exact; ncu on stacked tiles.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
mkdir -p /tmp/c2 && tar xzf .device-grid2d/c2.tgz -C /tmp/c2
python3 docs/gpu-runs/grid_cases.py /tmp/c2/cases > $OUT/cases.log 2>&1; echo "cases exit $?"; grep -ciE "mismatch|differ|fail" $OUT/cases.log; tail -3 $OUT/cases.log
compute-sanitizer --tool memcheck --print-limit 20 python3 docs/gpu-runs/grid_cases.py /tmp/c2/small > $OUT/memcheck.log 2>&1; echo "memcheck exit $?"; grep -E "ERROR SUMMARY|cases," $OUT/memcheck.log
python3 docs/gpu-runs/grid_perf.py /tmp/c2/m > $OUT/rowmajor.log 2>&1
python3 docs/gpu-runs/grid_perf.py /tmp/c2/s > $OUT/stacked.log 2>&1
cp /tmp/c2/s/results.csv $OUT/stacked.csv; cp /tmp/c2/m/results.csv $OUT/rowmajor.csv
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis"
M="--metrics smsp__inst_executed.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,dram__bytes_read.sum,dram__bytes_write.sum"
timeout 120 ncu --clock-control none $S $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c2/s 0 17 162 170 > $OUT/ncu.txt 2>&1
timeout 60 ncu --clock-control none $M -k k python3 docs/gpu-runs/grid_profile.py /tmp/c2/m 0 17 141 > $OUT/ncu-rowmajor.txt 2>&1
cd $OUT; echo "--- summary (fraction of copy)"; grep -hE "^(star|box)" rowmajor.log stacked.log | grep rc | awk '{printf "%-8s %-62s %6s %5s %s\n",$1,$3,$6,$8,$12}'
