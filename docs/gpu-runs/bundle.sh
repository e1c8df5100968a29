#!/usr/bin/env bash
# Builds the bundle docs/gpu-runs/check.sh runs on a GPU machine, in .device-check/ of the
# checkout (or $RC_DEVICE_DIR): release test binaries (features cudarc) and examples built
# without CUDA, stripped and xz-compressed; the 480 printed 2D/3D cases; grid_cases.py. About
# 15 minutes on two cores, 38 MB. The `device` tool then carries it: carry: [".device-check"].
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
dir="${RC_DEVICE_DIR:-.device-check}"
grep -qx "/$dir/" "$(git rev-parse --git-dir)/info/exclude" 2>/dev/null || echo "/$dir/" >> "$(git rev-parse --git-dir)/info/exclude"
# core-math-sys compiles its C for -march=$TARGET_CPU (default native): portable to the GPU host.
export TARGET_CPU=x86-64-v3
export RC_PTXAS=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/bin/ptxas
rm -rf "$dir" && mkdir -p "$dir"/tests "$dir"/examples
# cudarc as well as cust: many_gpus and bench --split split grids over GPUs through cudarc.
cargo build --release --features cudarc --examples
for e in laplace3d heat2d blur quickstart heat diffusion time_steps box nonlinear cust_interop explain gray_scott many_gpus bench; do cp ${CARGO_TARGET_DIR:-target}/release/examples/$e "$dir"/examples/; done
cargo test --release --features cudarc --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys, shutil
want = {"gpu", "gpu_grid", "gpu_steps", "cudarc", "gpu_misuse", "grid_methods", "fields", "systems", "gpu_split"}
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    exe = m.get("executable")
    if exe and m.get("profile", {}).get("test") and m["target"]["name"] in want:
        shutil.copy(exe, sys.argv[1] + "/tests/test-" + m["target"]["name"])
' "$dir"
# rc-runtime's 2D launches through both back ends (the echo kernel: the prefetch distance).
cargo test --release -p rc-stencil-runtime --features cust,cudarc --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    exe = m.get("executable")
    if exe and m.get("profile", {}).get("test") and m["target"]["name"] == "grid" and "rc-stencil-runtime" in m["package_id"]:
        shutil.copy(exe, sys.argv[1] + "/tests/test-runtime_grid")
' "$dir"
ls "$dir"/tests
rm -rf /tmp/cases && mkdir -p /tmp/cases && RC_GRID_CASES=/tmp/cases cargo test --release -p rc-stencil-core --test grid write_gpu >/dev/null
tar czf "$dir"/cases.tgz -C /tmp cases
cp docs/gpu-runs/grid_cases.py "$dir"/
strip "$dir"/tests/* "$dir"/examples/*
xz -T2 -6 "$dir"/tests/* "$dir"/examples/*
du -sh "$dir"
