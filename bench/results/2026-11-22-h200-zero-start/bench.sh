#!/usr/bin/env bash
# The benchmark on the zero_start code generator: peers, every f32 kernel, f64 at r = 1, 4, 16;
# then compute-sanitizer (memcheck, racecheck) on the r = 32 staged and auto kernels.
D=$OUT/bench; mkdir -p $D/f32 $D/f64
echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), started $(date -u)" > $D/run.txt
python3 bench/peers.py --type f32 --out $D/f32/peers.csv > $D/f32/peers.log 2>&1
.device-bin/examples/bench --type f32 --peers $D/f32/peers.csv --out $D/f32 > $D/f32/bench.log 2>&1; echo "f32 exit $?" >> $D/run.txt
.device-bin/examples/bench --type f64 --radii 1,4,16 --out $D/f64 > $D/f64/bench.log 2>&1; echo "f64 exit $?" >> $D/run.txt
echo "# bench finished $(date -u)" >> $D/run.txt
S="compute-sanitizer --error-exitcode 9 --print-limit 20"
for tool in memcheck racecheck; do
  timeout 100 $S --tool $tool .device-bin/examples/bench --radii 32 --n 200000 --reps 1 --warm-up 0 --variants register_cache_staged,register_cache_auto,register_cache_window > $D/sanitizer-$tool.log 2>&1; echo "sanitizer $tool exit $?" >> $D/run.txt
done
echo "# finished $(date -u)" >> $D/run.txt
cat $D/run.txt; tail -30 $D/f32/summary.txt; cat $D/f64/summary.txt | tail -8
(cd $OUT && tar czf bench.tgz bench && rm -rf bench)
