"""Row-block loop probe: rc's default box r = 4 PTX (window(4), 4 rows per pass) looped K times over
consecutive row blocks of one warp: a hot loop of the interior path alone where all K blocks are
interior, else a cold loop of the whole tile (test and every path). Launch bounds and block size
edited; tile numbering from a 2D grid (nodiv); interior rows 32-bit pitch (p32)."""
import re
SRC='source/grid_box2d_r4_f32_rc_default.ptx'
def build(threads, mb, K, p32=True):
    s=open(SRC).read().replace('rc_default','k')
    s=re.sub(r'\.maxntid \d+, 1, 1', f'.maxntid {threads}, 1, 1', s)
    s=re.sub(r'\.minnctapersm \d+', f'.minnctapersm {mb}', s)
    s=s.replace('mad.lo.u64 %a11, %a11, 8, %a15;', f'mad.lo.u64 %a11, %a11, {threads//32}, %a15;')
    s=s.replace('mul.lo.u64 %a14, %a11, 4;', f'mul.lo.u64 %a14, %a11, {4*K};')
    a=s.index('\tcvt.u64.u32 %a8, %t2;')
    b=s.index('\tsub.u64 %a12, %a8, %a12;\n')+len('\tsub.u64 %a12, %a8, %a12;\n')
    s=s[:a]+'\tmov.u32 %t3, %ctaid.y;\n\tcvt.u64.u32 %a11, %t3;\n\tcvt.u64.u32 %a12, %t2;\n'+s[b:]
    s=s.replace('\t.reg .b32 %sr<1>;\n','\t.reg .b32 %sr<1>;\n\t.reg .b64 %h<8>;\n\t.reg .pred %qh;\n\t.reg .b32 %k;\n\t.reg .b32 %n32;\n\t.reg .b32 %m32;\n')
    s=s.replace('\tcvta.to.global.u64 %a0, %a0;\n','\tcvta.to.global.u64 %a0, %a0;\n\tcvt.u32.u64 %n32, %a2;\n\tcvt.u32.u64 %m32, %a3;\n')
    i0=s.index('\t// interior tile: every element it loads')
    i1=s.index('$rc_interior_3:\n')
    i2=s.index('$rc_tile_done_4:\n')
    pro, region, interior = s[:i0], s[i0:i2], s[i1+len('$rc_interior_3:\n'):i2]
    interior=re.sub(r'\$rc_(\w+)', r'$hot_\1', interior)
    if p32:
        interior=re.sub(r'add\.u64 (%a\d+), (%a\d+), %a16;', r'mad.wide.u32 \1, %n32, 4, \2;', interior)
        interior=re.sub(r'add\.u64 (%a\d+), (%a\d+), %a17;', r'mad.wide.u32 \1, %m32, 4, \2;', interior)
    def advance(label):
        return (f'\tadd.s64 %a14, %a14, 4;\n\tmul.lo.u64 %h4, %a2, 4;\n\tadd.s64 %a18, %a18, %h4;\n'
                f'\tmul.lo.u64 %h5, %a3, 4;\n\tadd.s64 %a19, %a19, %h5;\n\tadd.u32 %k, %k, 1;\n'
                f'\tsetp.lt.u32 %qh, %k, {K};\n\t@%qh bra {label};\n\tret;\n')
    test=('\t// hot: every row block of the warp interior\n\tsub.s64 %h0, %a4, 4;\n\tadd.s64 %h1, %h0, 136;\n'
          '\tsetp.ge.s64 %qh, %h0, 0;\n\tsetp.le.and.s64 %qh, %h1, %a2, %qh;\n'
          f'\tsub.s64 %h2, %a14, 4;\n\tadd.s64 %h3, %h2, {4*K+8};\n\tsetp.ge.and.s64 %qh, %h2, 0, %qh;\n'
          '\tsetp.le.and.s64 %qh, %h3, %a6, %qh;\n\tand.pred %qh, %qh, %q1;\n\tmov.u32 %k, 0;\n\t@%qh bra $HOT;\n')
    out=pro+test+'$COLD:\n'+region+'$rc_tile_done_4:\n'+advance('$COLD')+'$HOT:\n'+interior+advance('$HOT')+'}\n'
    open(f'd{threads}_r4_mb{mb}_k{K}.ptx','w').write(out)
for t,mb in ((256,4),(128,8)):
    for K in (1,2,4,8):
        build(t,mb,K)
build(256,5,4); build(128,10,4); build(256,3,2); build(128,6,2)
