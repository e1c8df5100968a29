#!/usr/bin/env bash
# The grid benchmark in one command on a GPU machine, from a bench binary built elsewhere (no
# cargo needed): the peers first, then every rc kernel with the peers merged.
#   usage, from the repository root:  bash bench/grid.sh BENCH_BINARY DIR [bench options...]
# e.g. bash bench/grid.sh .device-bin/examples/bench bench/results/<date>-h100-grid
set -euo pipefail
bench="${1:?usage: bash bench/grid.sh BENCH_BINARY DIR [bench options...]}"
dir="${2:?usage: bash bench/grid.sh BENCH_BINARY DIR [bench options...]}"
shift 2
mkdir -p "$dir"
python3 bench/peers.py --grid "$dir/peers.csv" 2>&1 | tee "$dir/peers.log"
"$bench" --grid --out "$dir" --peers "$dir/peers.csv" "$@" 2>&1 | tee "$dir/bench.log"
