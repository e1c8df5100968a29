#!/usr/bin/env bash
# planes3d4, call 2 (H200): (1) the probe's star r = 1 tile and rc's staged star r = 1 tiles in one
# harness (bench/probes/staged3d_ab.cu): main's 4 x 4 (m410) and the branch's 14 tiles (n410-n423,
# write_perf's numbers and launches); (2) bench --grid of the 3D stencils, main's binary and the
# branch's (star r = 1 now staged by default) in the same call; (3) ncu of the probe, main's and
# the branch's 4 x 4 star and the three other defaults, each launched once.
set -uo pipefail
D=.device-planes3d4
status=0
step() { echo "== $*"; "$@" || { echo "FAILED (exit $?): $*"; status=1; }; }
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
B=/tmp/staged3d_ab; cp $D/staged3d_ab $B; chmod +x $B
spec() { awk -v k=$2 -v d=$D '$1 == k {printf "%s=%s/ptx/%s%s.ptx:%s:%s:%s", n, d, p, $1, $2, $3, $4}' p=$1 n=$1$2 $D/ptx/index.txt; }
A="$(spec m 410)"; for k in $(seq 410 423); do A="$A $(spec n $k)"; done
echo "$A" | tr ' ' '\n' | head -3
timeout 150 $B --probe-only $A > $OUT/ab.log 2>&1; echo "harness exit $?"; cat $OUT/ab.log
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2" && chmod +x "$2"; }
unxz $D/bench_main.xz /tmp/bench_main && unxz $D/bench_new2.xz /tmp/bench_new
S=star3d_r1,box3d_r1,star3d_r2,box3d_r2
step timeout 120 /tmp/bench_main --grid --stencils $S --out /tmp/grid_main > $OUT/bench_main.log 2>&1
step timeout 120 /tmp/bench_new --grid --stencils $S --out /tmp/grid_new > $OUT/bench_new.log 2>&1
paste -d'\n' <(grep -E "default|copy" $OUT/bench_main.log | sed 's/^/main  /') <(grep -E "default|copy" $OUT/bench_new.log | sed 's/^/new   /') | cut -c1-200
cp /tmp/grid_main/results.csv $OUT/grid_main.csv 2>/dev/null; cp /tmp/grid_new/results.csv $OUT/grid_new.csv 2>/dev/null
N="$(spec m 410) $(spec n 410)"; for k in 432 498 564; do N="$N $(spec m $k) $(spec n $k)"; done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min
timeout 150 ncu --print-units base --metrics $M $B --once --probe-only $N > $OUT/ncu.txt 2>&1; echo "ncu exit $?"
python3 - $OUT/ncu.txt <<'PY'
import re, sys
names, rows = [], []
for l in open(sys.argv[1]):
    m = re.match(r"launch (\S+)", l)
    if m: names.append(m.group(1))
    if re.search(r"\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", l): rows.append({})
    m = re.match(r"\s+(\S+)\s+(\S+)?\s+([\d,.]+)$", l)
    if m and rows: rows[-1][m.group(1)] = m.group(3)
keys = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "smsp__inst_executed.sum", "launch__registers_per_thread", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "sm__cycles_active.max", "sm__cycles_active.min"]
short = ["ns", "dram_rd", "l2_rd_sect", "l2_rd_hit", "inst", "regs", "long_sb", "barrier", "sm_cyc_max", "sm_cyc_min"]
print("%-22s " % "kernel" + " ".join("%12s" % k for k in short))
for i, n in enumerate(names):
    r = rows[i] if i < len(rows) else {}
    print("%-22s " % n + " ".join("%12s" % r.get(k, "-") for k in keys))
PY
echo "exit status: $status"
cd $OUT && tar czf call2.tgz *.log *.txt *.csv && rm -f *.log *.txt *.csv
