"""rc's printed star r = 1 tile of 4 warps x 4 rows (write_perf file 410) edited one habit at a
time, for bench/probes/staged3d_ab.cu: python3 variants.py IN.ptx OUTDIR
  st_end:   the output rows stored at the end of the step (after the last row's adds), as the
            probe stores them, instead of each right after its adds
  no_edge:  every block takes the 16-byte path of an inside plane (reads past the edges: not
            exact; what rc's edge path costs)"""
import re, sys

src, out = sys.argv[1], sys.argv[2]
s = open(src).read()

# Stores: each "whole row" block runs from its comment to its "$rc_stores_done_N:" label.
loop = s.index("$rc_loop_")
body, tail = s[loop:], None
blocks = re.findall(r"\t// whole row: every output of output row \d+ exists\n.*?\$rc_stores_done_\d+:\n", body, re.S)
assert len(blocks) == 4, len(blocks)
moved = body
for b in blocks:
    moved = moved.replace(b, "", 1)
put = "\tbar.sync 0;\n\t// put the fetched plane"
assert moved.count(put) == 1
moved = moved.replace(put, "".join(blocks) + put)
open(f"{out}/st_end.ptx", "w").write(s[:loop] + moved)

# No edge path: the branch to the inside plane's vectors taken always.
t, n = re.subn(r"@%q\d+ bra (\$rc_plane_vectors_\d+);", r"bra \1;", s)
assert n == 4, n
open(f"{out}/no_edge.ptx", "w").write(t)
