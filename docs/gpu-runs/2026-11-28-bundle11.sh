#!/usr/bin/env bash
# Builds .device-s11/ in the repository (run from anywhere in the checkout) for the eleventh session's GPU run (docs/gpu-runs/2026-11-28-session11.sh):
# release test binaries (features cudarc) and examples built without CUDA, stripped and
# xz-compressed; the 480 printed 2D/3D cases; grid_cases.py.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
export RC_PTXAS=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/bin/ptxas
rm -rf .device-s11 && mkdir -p .device-s11/tests .device-s11/examples
cargo build --release --examples
for e in laplace3d heat2d blur quickstart heat diffusion time_steps bench; do cp target/release/examples/$e .device-s11/examples/; done
cargo test --release --features cudarc --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys, shutil
want = {"gpu", "gpu_grid", "gpu_steps", "cudarc", "gpu_misuse", "grid_methods", "fields"}
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    exe = m.get("executable")
    if exe and m.get("profile", {}).get("test") and m["target"]["name"] in want:
        shutil.copy(exe, ".device-s11/tests/test-" + m["target"]["name"])
'
# rc-runtime's 2D launches through both back ends (the echo kernel: the prefetch distance).
cargo test --release -p rc-runtime --features cust,cudarc --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    exe = m.get("executable")
    if exe and m.get("profile", {}).get("test") and m["target"]["name"] == "grid" and "rc-runtime" in m["package_id"]:
        shutil.copy(exe, ".device-s11/tests/test-runtime_grid")
'
ls .device-s11/tests
rm -rf /tmp/cases && mkdir -p /tmp/cases && RC_GRID_CASES=/tmp/cases cargo test --release -p rc-core --test grid write_gpu >/dev/null
tar czf .device-s11/cases.tgz -C /tmp cases
cp docs/gpu-runs/grid_cases.py .device-s11/
strip .device-s11/tests/* .device-s11/examples/*
xz -T2 -6 .device-s11/tests/* .device-s11/examples/*
du -sh .device-s11
