#!/bin/bash
# Call 1: design probe + rc's kernels timed + ncu of rc's fused heat and the probe's persistent K=16.
cd "$(dirname "$0")"
set -x
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv
nvcc -O3 -arch=sm_90 -Xptxas -v -o fused1d fused1d.cu -lcuda > $OUT/build.log 2>&1 || { cat $OUT/build.log; exit 1; }
cuobjdump -sass fused1d > $OUT/probe.sass
./fused1d rc_heat_steps.ptx rc_heat_steps 224 16 only 2>&1 | tee $OUT/rc.log
./fused1d rc_nine_tap_steps.ptx rc_nine_tap_steps 896 16 2>&1 | tee $OUT/probe.log
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section ComputeWorkloadAnalysis --section LaunchStats"
timeout 120 ncu --clock-control none $S -k regex:rc_heat_steps --launch-skip 3 --launch-count 1 ./fused1d rc_heat_steps.ptx rc_heat_steps 224 16 only > $OUT/ncu_rc_heat.txt 2>&1
timeout 150 ncu --clock-control none $S -k regex:'fusedI4HeatLi16ELi16ELb1' --launch-skip 3 --launch-count 1 ./fused1d > $OUT/ncu_probe_k16.txt 2>&1
tail -5 $OUT/ncu_probe_k16.txt
cd $OUT && tar czf all.tgz *.log *.txt probe.sass && rm -f probe.sass ncu_*.txt
