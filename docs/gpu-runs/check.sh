#!/usr/bin/env bash
# The GPU checks of a session, on a machine with an NVIDIA GPU and no Rust: run from the
# repository root after docs/gpu-runs/bundle.sh built the bundle here and the `device` tool
# carried it (carry: [".device-check"]). In one call: the correctness steps side by side (they
# only compare outputs), then memcheck, then the timed benchmarks named in $RC_BENCH alone on
# the machine (e.g. RC_BENCH="--systems --fields"; none by default).
#   usage: bash docs/gpu-runs/check.sh
# A call returns at most 8 files: every step's log goes into $OUT/logs.tgz (rewritten after each
# step, so a call cut short still returns what finished), each benchmark's results into
# $OUT/bench-*.tgz. The session's record is made from summary.log and the step logs.
set -uo pipefail
bundle="${RC_DEVICE_DIR:-.device-check}"
out="${OUT:-/tmp/out}"; logs=/tmp/logs; mkdir -p "$out" "$logs"
pack() { tar czf "$out/logs.tgz" -C /tmp logs; }
# A step's log is its own file; a failure is a line in summary.log (steps also run in background).
step() { local log="$logs/$1.log"; shift; ( echo "== $* ($(date -u +%T))"; "$@"; r=$?; echo "== exit $r ($(date -u +%T))"; exit $r ) > "$log" 2>&1 || echo "FAILED: $*" >> "$logs/summary.log"; pack; }
{ date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; } | tee "$logs/summary.log"
root=$(pwd)
cd "$bundle"
for f in tests/*.xz examples/*.xz; do python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f" && chmod +x "${f%.xz}"; done
tar xzf cases.tgz
# Correctness, side by side: printed 2D/3D kernels bit for bit against the emulation; the grid
# catalogue, 16-bit and 2^31 grid; fused steps (1D, 2D, 3D, every boundary, poisoned outputs;
# 16-bit through cudarc); systems; both back ends; the sampled 1D suite; the examples.
step cases python3 grid_cases.py cases &
step gpu_grid tests/test-gpu_grid --include-ignored --nocapture &
step gpu_steps tests/test-gpu_steps --include-ignored --nocapture &
step gpu env RC_GPU_SAMPLE=8 tests/test-gpu --include-ignored --nocapture &
{ step cudarc tests/test-cudarc --include-ignored --nocapture
  step gpu_misuse tests/test-gpu_misuse --include-ignored --nocapture
  step grid_methods tests/test-grid_methods --include-ignored --nocapture
  step fields tests/test-fields --include-ignored --nocapture
  step systems tests/test-systems --include-ignored --nocapture
  step gpu_split tests/test-gpu_split --include-ignored --nocapture
  step runtime_grid tests/test-runtime_grid --include-ignored --nocapture
  for e in examples/*; do case "$e" in *.xz|*/bench) ;; *) step "example_$(basename "$e")" "$e" ;; esac; done; } &
wait
step memcheck_steps compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps launch_steps_and_run_steps_equal_run_cpu_steps --include-ignored --nocapture
step memcheck_systems compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_steps systems_step_every_field_together_on_the_gpu --include-ignored --nocapture
step memcheck_split compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu_split a_split_system_and_a_split_coefficient_field_equal_one_gpu --include-ignored --nocapture
if [ "${RC_MEMCHECK_ALL:-0}" = 1 ]; then
  step memcheck_grid compute-sanitizer --tool memcheck --error-exitcode 9 env RC_GPU_SAMPLE=1 tests/test-gpu_grid grid_catalogue --include-ignored --nocapture
  step memcheck_half compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-cudarc sixteen_bit --include-ignored --nocapture
  step memcheck_cases compute-sanitizer --tool memcheck --error-exitcode 9 python3 grid_cases.py cases
fi
# What a first launch waits for: the JIT compile of every example's PTX, the driver's cache off.
mkdir -p /tmp/ptx && for e in examples/*; do case "$e" in *.xz|*/bench) ;; *) "$e" --emit-ptx "/tmp/ptx/$(basename "$e")" >/dev/null 2>&1 ;; esac; done
step jit_time env CUDA_CACHE_DISABLE=1 python3 "$root/docs/gpu-runs/jit_time.py" /tmp/ptx
# Timings last, alone on the machine.
for mode in ${RC_BENCH:-}; do
  name="bench${mode#-}"; name="${name//-/}"
  step "$name" examples/bench "$mode" --out "/tmp/$name"
  [ -d "/tmp/$name" ] && tar czf "$out/$name.tgz" -C /tmp "$name"
done
if grep -q FAILED "$logs/summary.log"; then status=1; else status=0; fi
echo "exit status: $status" | tee -a "$logs/summary.log"
pack
cat "$logs/summary.log"
exit $status
