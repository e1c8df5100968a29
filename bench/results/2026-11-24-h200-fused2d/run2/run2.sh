#!/bin/bash
# Run 2 (fused2d): PTX variants of the 2D fused kernel side by side (bands turned, strip rows, T, register caps, interior-only bounds).
D=.device-fused2d
R=$OUT/run2; mkdir -p $R
cd $D/ptx2 && ls *.ptx > $R/variants.txt
python3 ../ptxbench.py 8192 8192 *.ptx > $R/ptxbench.log 2>&1
cat $R/ptxbench.log
tar czf $OUT/run2.tgz -C $OUT run2
