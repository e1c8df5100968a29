"""Block-size and L2-prefetch probe of main's default 2D box r = 4 tile (e1c492a: 4-warp blocks,
2D grid, 32-bit row steps, the fused zero): blocks of 1, 2 and 4 warps; the interior path first
prefetches into L2 the 12 input rows x 4 lines of its tile AHEAD rows below."""
import re
src = open('src.ptx').read().replace('rc_default', 'k')
def variant(threads, mb, ahead=None):
    s = src.replace('.maxntid 128, 1, 1', f'.maxntid {threads}, 1, 1').replace('.minnctapersm 8', f'.minnctapersm {mb}')
    s = s.replace('mad.lo.u64 %a10, %a10, 4, %a13;', f'mad.lo.u64 %a10, %a10, {threads // 32}, %a13;')
    name = f'd{threads}_r4_mb{mb}_nodiv'
    if ahead:
        s = s.replace('\t.reg .b32 %sr<1>;\n', '\t.reg .b32 %sr<1>;\n\t.reg .b64 %pf<8>;\n\t.reg .b32 %pt<8>;\n\t.reg .pred %pq<2>;\n')
        code = (f'\t// prefetch into L2 the tile {ahead} rows below\n'
                '\tshr.u32 %pt0, %t0, 2;\n\tand.b32 %pt1, %t0, 3;\n'
                f'\tadd.s64 %pf0, %a12, {ahead - 4};\n\tcvt.u64.u32 %pf1, %pt0;\n\tadd.s64 %pf1, %pf0, %pf1;\n'
                '\tsetp.lt.s64 %pq0, %pf1, %a6;\n\tmul.lo.u64 %pf2, %pf1, %a2;\n\tadd.u64 %pf2, %pf2, %a4;\n'
                '\tmad.lo.u64 %pf3, %pf2, 4, %a0;\n\tmul.wide.u32 %pf4, %pt1, 128;\n\tadd.u64 %pf3, %pf3, %pf4;\n'
                '\t@%pq0 prefetch.global.L2 [%pf3];\n'
                '\tadd.s64 %pf1, %pf1, 8;\n\tsetp.lt.s64 %pq1, %pf1, %a6;\n\tsetp.lt.u32 %pq0, %t0, 16;\n\tand.pred %pq1, %pq1, %pq0;\n'
                '\tmul.lo.u64 %pf5, %a2, 32;\n\tadd.u64 %pf3, %pf3, %pf5;\n\t@%pq1 prefetch.global.L2 [%pf3];\n')
        s = s.replace('$rc_interior_1:\n', '$rc_interior_1:\n' + code)
        name += f'_pf{ahead}'
    open(name + '.ptx', 'w').write(s)
variant(128, 8); variant(64, 16); variant(32, 32)
for ahead in (64, 128): variant(128, 8, ahead); variant(64, 16, ahead)
