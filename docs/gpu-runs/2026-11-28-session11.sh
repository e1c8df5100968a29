#!/usr/bin/env bash
# 2026-11-28, eleventh session: main with the launch map (which block runs which tile, as an
# index program the PTX prints and the emulator runs; every launch shape, the fused edges
# kernel's among them, from it), the machine program's verifier and its text form. The PTX of
# all 1722 kernels of .ci/ptx-snapshot is byte-identical to the tenth session's, so nothing is
# timed: this run checks the launches (the runtime's shapes now come from the map) and the
# suites, on whichever GPU the call gets, in one call: the correctness steps side by side, then
# memcheck.
# Carried in .device-s11/ (docs/gpu-runs/2026-11-28-bundle11.sh builds it): test binaries from
# `cargo test --release --features cudarc --no-run` (gpu, gpu_grid, gpu_steps, cudarc, gpu_misuse,
# grid_methods, fields; rc-runtime's grid, features cust and cudarc), examples built without
# CUDA, stripped and xz-compressed; cases.tgz from
# `RC_GRID_CASES=DIR cargo test --release -p rc-core --test grid write_gpu`; grid_cases.py.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT
# Every step's log goes into $OUT/logs.tgz (rewritten after each step, so a call cut short
# still returns what finished).
set -uo pipefail
out="${OUT:-/tmp/out}"; logs=/tmp/logs; mkdir -p "$out" "$logs"
pack() { tar czf "$out/logs.tgz" -C /tmp logs; }
# A step's log is its own file; a failure is a line in summary.log (steps also run in background).
step() { local log="$logs/$1.log"; shift; ( echo "== $* ($(date -u +%T))"; "$@"; r=$?; echo "== exit $r ($(date -u +%T))"; exit $r ) > "$log" 2>&1 || echo "FAILED: $*" >> "$logs/summary.log"; pack; }
{ date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; } | tee "$logs/summary.log"
cd .device-s11
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
if grep -q FAILED "$logs/summary.log"; then status=1; else status=0; fi
echo "exit status: $status" | tee -a "$logs/summary.log"
pack
cat "$logs/summary.log"
exit $status
