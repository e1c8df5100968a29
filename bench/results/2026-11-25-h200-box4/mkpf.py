"""L2 prefetch probe: the default box r = 4 tile (window(4), 4 rows), 128-thread blocks, nodiv, p32;
the interior path first prefetches into L2 the 12 input rows x 4 lines (512 bytes of the tile's x
span) of the tile G bands below (the block a later generation of resident blocks will run)."""
import re
exec(open('mk.py').read().split("variant(4,256,4,False)")[0])
def pf(threads, mb, G):
    variant(4, threads, mb, True, True)
    name=f'd{threads}_r4_mb{mb}_nodiv_p32'
    s=open(name+'.ptx').read()
    s=s.replace('\t.reg .b32 %sr<1>;\n','\t.reg .b32 %sr<1>;\n\t.reg .b64 %pf<8>;\n\t.reg .b32 %pt<8>;\n\t.reg .pred %pq<2>;\n')
    band_rows = 4*threads//32
    code=(f'\t// prefetch into L2 the tile {G} bands below\n'
          f'\tshr.u32 %pt0, %t0, 2;\n\tand.b32 %pt1, %t0, 3;\n'
          f'\tadd.s64 %pf0, %a14, {G*band_rows-4};\n'
          f'\tcvt.u64.u32 %pf1, %pt0;\n\tadd.s64 %pf1, %pf0, %pf1;\n'            # row = tile_y + G*R - 4 + lane/4
          f'\tsetp.lt.s64 %pq0, %pf1, %a6;\n'
          f'\tmul.lo.u64 %pf2, %pf1, %a2;\n\tadd.u64 %pf2, %pf2, %a4;\n'
          f'\tmad.lo.u64 %pf3, %pf2, 4, %a0;\n\tmul.wide.u32 %pf4, %pt1, 128;\n\tadd.u64 %pf3, %pf3, %pf4;\n'
          f'\t@%pq0 prefetch.global.L2 [%pf3];\n'
          f'\tadd.s64 %pf1, %pf1, 8;\n\tsetp.lt.s64 %pq1, %pf1, %a6;\n\tsetp.lt.u32 %pq0, %t0, 16;\n\tand.pred %pq1, %pq1, %pq0;\n'
          f'\tmul.lo.u64 %pf5, %a2, 32;\n\tadd.u64 %pf3, %pf3, %pf5;\n'
          f'\t@%pq1 prefetch.global.L2 [%pf3];\n')
    s=s.replace('$rc_interior_3:\n','$rc_interior_3:\n'+code)
    open(f'd{threads}_r4_mb{mb}_nodiv_p32_pf{G}.ptx','w').write(s)
for G in (8,16,24,32):
    pf(128,8,G)
variant(4,128,8,True,True); variant(4,256,4,False); variant(5,128,8,True,True)
