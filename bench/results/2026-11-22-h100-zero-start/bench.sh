#!/usr/bin/env bash
# The benchmark on an H100, the same binaries as the H200 run of 06:27: peers, every f32 kernel,
# f64 at r = 1, 4, 16.
D=$OUT/bench; mkdir -p $D/f32 $D/f64
echo "# $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,memory.total --format=csv,noheader), started $(date -u)" > $D/run.txt
python3 bench/peers.py --type f32 --out $D/f32/peers.csv > $D/f32/peers.log 2>&1
.device-bin/examples/bench --type f32 --peers $D/f32/peers.csv --out $D/f32 > $D/f32/bench.log 2>&1; echo "f32 exit $?" >> $D/run.txt
.device-bin/examples/bench --type f64 --radii 1,4,16 --out $D/f64 > $D/f64/bench.log 2>&1; echo "f64 exit $?" >> $D/run.txt
echo "# finished $(date -u)" >> $D/run.txt
cat $D/run.txt; tail -22 $D/f32/summary.txt; tail -8 $D/f64/summary.txt
(cd $OUT && tar czf bench.tgz bench && rm -rf bench)
