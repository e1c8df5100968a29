#!/usr/bin/env bash
# 2026-11-24, branch half2: two 16-bit elements per 32-bit register and per shuffle (packed
# round-robin and granule caches, paired shuffles, straddling words) and `bench --fields`.
# Carried in .device-run/ (built without CUDA, as 2026-11-24-merged.sh): test binaries from
# `cargo test --release --features cudarc --no-run` (gpu, gpu_grid, cudarc, fields) and
# examples/bench from `cargo build --release --example bench`, gzipped.
# Usage on the GPU machine, from the repository root: bash THIS_SCRIPT check|bench
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
root=$(pwd)
cd .device-run
for f in tests/*.gz examples/*.gz; do [ -e "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
case "${1:?check or bench}" in
check)
  # 1D 16-bit catalogue (packed f16 round-robin with straddling words, bf16 granule(4) on a warp
  # of 8, granule(8), windows, staged, shared memory) and the 40 random 16-bit stencils.
  step tests/test-gpu sixteen_bit --include-ignored --nocapture
  # 2D f16 round-robin and 3D bf16 granule(4) streaming along z, every shape, guarded outputs.
  step tests/test-gpu_grid sixteen_bit --include-ignored --nocapture
  step tests/test-cudarc --include-ignored --nocapture
  step tests/test-fields --include-ignored --nocapture
  step compute-sanitizer --tool memcheck --error-exitcode 9 tests/test-gpu sixteen_bit --nocapture
  ;;
bench)
  # The f16 box average (granule(8) and round_robin now packed; auto and window(8) unchanged)
  # and the two-field diffusion against the copy, each bit-exact before it is timed.
  cd "$root" && step .device-run/examples/bench --half && step .device-run/examples/bench --fields
  cp -r bench/results/*f16* bench/results/*fields* "${OUT:-/tmp}/" 2>/dev/null
  ;;
esac
echo "exit status: $status"
exit $status
