#!/usr/bin/env bash
# 2026-11-25, tenth session: main with the L2 prefetch of issue-bound 2D tiles (the launch passes
# the distance), the boundary rule of edge vectors through rule_coordinate and the stacked
# prologues without their unread lines; on an H200, in one call: the correctness steps side by
# side first (they only compare outputs), then memcheck, then the 2D/3D timings alone on the
# machine, then 2D box r = 4 at three more grid widths (the prefetch distance changes with them).
# Carried in .device-s10/ (docs/gpu-runs/2026-11-25-bundle10.sh builds it): test binaries from
# `cargo test --release --features cudarc --no-run` (gpu, gpu_grid, gpu_steps, cudarc, gpu_misuse,
# grid_methods, fields; rc-runtime's grid, features cust and cudarc), examples (laplace3d heat2d blur quickstart heat diffusion time_steps
# bench) built without CUDA, stripped and xz-compressed; cases.tgz from
# `RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid write_gpu`; grid_cases.py.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT STENCILS
# A call returns at most 8 files: every step's log goes into $OUT/logs.tgz (rewritten after each
# step, so a call cut short still returns what finished), the grid bench into $OUT/grid.tgz.
set -uo pipefail
out="${OUT:-/tmp/out}"; logs=/tmp/logs; mkdir -p "$out" "$logs"
pack() { tar czf "$out/logs.tgz" -C /tmp logs; }
# A step's log is its own file; a failure is a line in summary.log (steps also run in background).
step() { local log="$logs/$1.log"; shift; ( echo "== $* ($(date -u +%T))"; "$@"; r=$?; echo "== exit $r ($(date -u +%T))"; exit $r ) > "$log" 2>&1 || echo "FAILED: $*" >> "$logs/summary.log"; pack; }
{ date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; } | tee "$logs/summary.log"
root=$(pwd)
cd .device-s10
for f in tests/*.xz examples/*.xz; do python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f" && chmod +x "${f%.xz}"; done
tar xzf cases.tgz
# Correctness, side by side: printed 2D/3D kernels bit for bit against the emulation; the grid
# catalogue, 16-bit and 2^31 grid; fused steps (1D, 2D, 3D, every boundary, poisoned outputs;
# 16-bit through cudarc); both back ends; the sampled 1D suite; the examples.
step cases python3 grid_cases.py cases &
step gpu_grid tests/test-gpu_grid --include-ignored --nocapture &
step gpu_steps tests/test-gpu_steps --include-ignored --nocapture &
step gpu env RC_GPU_SAMPLE=8 tests/test-gpu --include-ignored --nocapture &
{ step cudarc tests/test-cudarc --include-ignored --nocapture
  step gpu_misuse tests/test-gpu_misuse --include-ignored --nocapture
  step grid_methods tests/test-grid_methods --include-ignored --nocapture
  step fields tests/test-fields --include-ignored --nocapture
  step runtime_grid tests/test-runtime_grid --include-ignored --nocapture
  for e in laplace3d heat2d blur quickstart heat diffusion; do step example_$e examples/$e; done; } &
wait
step memcheck_grid compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --nocapture
step memcheck_steps compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --nocapture
step memcheck_half compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-cudarc sixteen_bit --nocapture
step memcheck_cases compute-sanitizer --tool memcheck --error-exitcode 9 python3 grid_cases.py cases
# Timings, alone: the one-step 2D/3D stencils with CuPy and PyTorch and copy in the same run
# (fused steps print as before: not timed again).
cd "$root" && step grid bash bench/grid.sh .device-s10/examples/bench /tmp/grid --stencils "${1:?stencils}"
# 2D box r = 4 at 64M elements of other widths: the default (prefetching) tile against the same
# tile without the prefetch, copy in the same run.
for shape in 2048x32768 1024x65536 32768x2048; do
  step wide_$shape .device-s10/examples/bench --grid --out /tmp/grid/wide_$shape --stencils box2d_r4 --shape-2d $shape
done
tar czf "$out/grid.tgz" -C /tmp grid
if grep -q FAILED "$logs/summary.log"; then status=1; else status=0; fi
echo "exit status: $status" | tee -a "$logs/summary.log"
pack
cat "$logs/summary.log"
exit $status
