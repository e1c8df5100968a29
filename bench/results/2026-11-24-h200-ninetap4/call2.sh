#!/usr/bin/env bash
# ninetap4, call 2: PTX variants of the 1D fused interior kernels (9-tap, heat) made from main 5a00417's
# printed PTX (probe/make_variants.py, first version: see README), timed alone by probe/bench_ptx.py.
# Ran past its 420 s limit: the "prod" variant deadlocked (README), so nothing was timed.
set -uo pipefail
cd .device-ninetap4/var
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/r
v="base late0 ringpairs ringpairs_late prod prod_late"
files=""; for k in rc_nine_tap_steps rc_heat_steps; do for x in $v; do files="$files $k.$x.ptx"; done; done
python3 bench_ptx.py 3 $files 2>&1 | tee $OUT/r/bench.log
