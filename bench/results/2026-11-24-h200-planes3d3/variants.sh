#!/usr/bin/env bash
# How the PTX files exp.py times (.device-planes3d3/ptx/NAME.ptx) were made, from the worktree
# root: rc's perf kernels (rc-core/tests/grid.rs write_perf) at three trees, and text edits.
#   m<K>: main 6539b32, write_perf file K (index: 366 star3d1 default window(4) p8 r2 mb2; 410
#         star3d1 planes(4) p4 r4 t128; 413 the same r2; 414 r4 mb4; 432 box3d1 default planes(4)
#         p4 r2 t128; 476 box3d1 planes(4) p4 r4 t128; 498 star3d2 default planes(4) p4 r4 t256;
#         542 star3d2 planes(4) p4 r4 t128; 564 box3d2 default planes(4) p4 r4 t256)
#   h<K>: main with heads and tails for warps of up to 4 rows (ring.rs: rows_per_warp() <= 4)
#   n<K>: 1be2460 (the last step only computes; reverted in 427d489)
#   <name>_na / _cg: the plane fetch's ld.global.nc as ld.global.nc.L1::no_allocate / ld.global.cg
#   g410: m410 with the block number taken from a 3D grid (4, 32, 16), x fastest
#   b432 / nb432: m432 / n432 declaring .minnctapersm 8 (ptxas: 64 registers, no spill)
set -euo pipefail
P=.device-planes3d3/ptx; mkdir -p $P
perf() { rm -rf "$1"; RC_GRID_PERF="$1" cargo test --release -p rc-core --test grid write_perf > /dev/null; }
git checkout -q 6539b32 && perf /tmp/perf_main
sed -i 's/pattern.rows_per_warp() <= 2 { partial }/pattern.rows_per_warp() <= 4 { partial }/' rc-core/src/ring.rs && perf /tmp/perf_ht4 && git checkout -q rc-core/src/ring.rs
git checkout -q 1be2460 && perf /tmp/perf_new && git checkout -q -
for k in 366 410 413 414 432 476 498 542 564; do cp /tmp/perf_main/$k.ptx $P/m$k.ptx; done
for k in 410 476; do cp /tmp/perf_ht4/$k.ptx $P/h$k.ptx; done
for k in 410 432 476 498 564; do cp /tmp/perf_new/$k.ptx $P/n$k.ptx; done
for f in m410 m476 m498 m564 h410 h476; do
  sed -e 's/^\.version 7\.0/.version 7.4/' -e 's/ld\.global\.nc\./ld.global.nc.L1::no_allocate./' $P/$f.ptx > $P/${f}_na.ptx
  sed -e 's/ld\.global\.nc\./ld.global.cg./' $P/$f.ptx > $P/${f}_cg.ptx
done
python3 - "$P" <<'PY'
import sys
p = sys.argv[1]
s = open(f"{p}/m410.ptx").read()
grid = "\t{\n\t.reg .u32 %gx, %gy, %gz, %nx, %ny;\n\tmov.u32 %gx, %ctaid.x;\n\tmov.u32 %gy, %ctaid.y;\n\tmov.u32 %gz, %ctaid.z;\n\tmov.u32 %nx, %nctaid.x;\n\tmov.u32 %ny, %nctaid.y;\n\tmad.lo.u32 %gy, %gz, %ny, %gy;\n\tmad.lo.u32 %t2, %gy, %nx, %gx;\n\t}\n"
open(f"{p}/g410.ptx", "w").write(s.replace("\tmov.u32 %t2, %ctaid.x;\n", grid))
for src, dst in [("m432", "b432"), ("n432", "nb432")]:
    t = open(f"{p}/{src}.ptx").read()
    i = t.index("\n{\n")
    open(f"{p}/{dst}.ptx", "w").write(t[:i] + "\n.minnctapersm 8" + t[i:])
PY
