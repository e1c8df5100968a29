"""L2 prefetch distance probe (session 9, for the next session's rule): main's default 2D box
r = 4 tile (4-warp blocks) with its interior path prefetching into L2 the 12 input rows x 4 lines
of its tile AHEAD rows below: fixed 128 rows, or adaptive: half the resident blocks (nsmid x 8 / 2)
over the grid's block columns, rounded, in bands of 16 rows (none when that rounds to 0)."""
src = open('src.ptx').read().replace('rc_default', 'k')
def variant(name, distance):
    s = src.replace('\t.reg .b32 %sr<1>;\n', '\t.reg .b32 %sr<1>;\n\t.reg .b64 %pf<8>;\n\t.reg .b32 %pt<8>;\n\t.reg .pred %pq<3>;\n\t.reg .f32 %pg<3>;\n')
    code = '\t// prefetch into L2 the tile AHEAD rows below\n' + distance + (
        '\tshr.u32 %pt0, %t0, 2;\n\tand.b32 %pt1, %t0, 3;\n'
        '\tcvt.u64.u32 %pf0, %pt5;\n\tadd.s64 %pf0, %pf0, %a12;\n\tsub.s64 %pf0, %pf0, 4;\n'
        '\tcvt.u64.u32 %pf1, %pt0;\n\tadd.s64 %pf1, %pf0, %pf1;\n'
        '\tsetp.lt.and.s64 %pq0, %pf1, %a6, %pq2;\n\tmul.lo.u64 %pf2, %pf1, %a2;\n\tadd.u64 %pf2, %pf2, %a4;\n'
        '\tmad.lo.u64 %pf3, %pf2, 4, %a0;\n\tmul.wide.u32 %pf4, %pt1, 128;\n\tadd.u64 %pf3, %pf3, %pf4;\n'
        '\t@%pq0 prefetch.global.L2 [%pf3];\n'
        '\tadd.s64 %pf1, %pf1, 8;\n\tsetp.lt.and.s64 %pq1, %pf1, %a6, %pq2;\n\tsetp.lt.u32 %pq0, %t0, 16;\n\tand.pred %pq1, %pq1, %pq0;\n'
        '\tmul.lo.u64 %pf5, %a2, 32;\n\tadd.u64 %pf3, %pf3, %pf5;\n\t@%pq1 prefetch.global.L2 [%pf3];\n')
    s = s.replace('$rc_interior_1:\n', '$rc_interior_1:\n' + code)
    open(f'd128_r4_mb8_nodiv_{name}.ptx', 'w').write(s)
open('d128_r4_mb8_nodiv.ptx', 'w').write(src)
variant('pf128', '\tmov.u32 %pt5, 128;\n\tsetp.eq.u32 %pq2, %t0, %t0;\n')
def adaptive(name, resident):
    variant(name, f'\t{resident}\n\tmov.u32 %pt3, %nctaid.x;\n'
            '\tcvt.rn.f32.u32 %pg0, %pt2;\n\tcvt.rn.f32.u32 %pg1, %pt3;\n\tdiv.approx.f32 %pg2, %pg0, %pg1;\n'
            '\tcvt.rni.u32.f32 %pt4, %pg2;\n\tsetp.ne.u32 %pq2, %pt4, 0;\n\tshl.b32 %pt5, %pt4, 4;\n')
adaptive('pfsm', 'mov.u32 %pt2, %nsmid;\n\tshl.b32 %pt2, %pt2, 2;')
adaptive('pf528', 'mov.u32 %pt2, 528;')
