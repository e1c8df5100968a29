#!/bin/bash
# Call 3 of helper grid2d3 (H200): the branch head through the runtime - gpu_grid (catalogue of
# 2D/3D stencils, 16-bit, a grid of more than 2^31 elements), grid_methods; memcheck over the 216
# small printed cases and the gpu_grid catalogue sample.
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
D=.device-grid2d3
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/c3 /tmp/bin && tar xzf $D/c3.tgz -C /tmp/c3
for b in test-gpu_grid test-grid_methods; do python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $D/$b.xz /tmp/bin/$b && chmod +x /tmp/bin/$b; done
/tmp/bin/test-gpu_grid --include-ignored --nocapture > $OUT/gpu_grid.log 2>&1; echo "gpu_grid exit $?"; grep "test result" $OUT/gpu_grid.log
/tmp/bin/test-grid_methods --include-ignored --nocapture > $OUT/grid_methods.log 2>&1; echo "grid_methods exit $?"; grep "test result" $OUT/grid_methods.log
timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 docs/gpu-runs/grid_cases.py /tmp/c3/small > $OUT/memcheck_cases.log 2>&1; echo "memcheck cases exit $?"; grep -E "ERROR SUMMARY" $OUT/memcheck_cases.log; tail -1 $OUT/memcheck_cases.log
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 /tmp/bin/test-gpu_grid grid_catalogue --nocapture > $OUT/memcheck_gpu_grid.log 2>&1; echo "memcheck gpu_grid exit $?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck_gpu_grid.log
