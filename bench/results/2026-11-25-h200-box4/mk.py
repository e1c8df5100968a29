import re,sys
srcs={4:'source/grid_box2d_r4_f32_rc_default.ptx',5:'source/grid_box2d_r4_f32_rc_rows5.ptx',6:'source/grid_box2d_r4_f32_rc_rows6.ptx'}
def variant(rows, threads, mb, nodiv, p32=False):
    s=open(srcs[rows]).read()
    entry=re.search(r'\.visible \.entry (\w+)\(',s).group(1)
    s=s.replace(entry,'k')
    s=re.sub(r'\.maxntid \d+, 1, 1', f'.maxntid {threads}, 1, 1', s)
    s=re.sub(r'\.minnctapersm \d+', f'.minnctapersm {mb}', s)
    s=s.replace('mad.lo.u64 %a11, %a11, 8, %a15;', f'mad.lo.u64 %a11, %a11, {threads//32}, %a15;')
    if nodiv:
        a=s.index('\tcvt.u64.u32 %a8, %t2;')
        b=s.index('\tsub.u64 %a12, %a8, %a12;\n')+len('\tsub.u64 %a12, %a8, %a12;\n')
        s=s[:a]+'\tmov.u32 %t3, %ctaid.y;\n\tcvt.u64.u32 %a11, %t3;\n\tcvt.u64.u32 %a12, %t2;\n'+s[b:]
    if p32:
        i=s.index('$rc_interior_3:')
        head,tail=s[:i],s[i:]
        head=head.replace('\tcvta.to.global.u64 %a0, %a0;\n','\tcvta.to.global.u64 %a0, %a0;\n\tcvt.u32.u64 %r1456, %a2;\n\tcvt.u32.u64 %r1457, %a3;\n')
        tail,n1=re.subn(r'add\.u64 (%a\d+), (%a\d+), %a16;', r'mad.wide.u32 \1, %r1456, 4, \2;', tail)
        tail,n2=re.subn(r'add\.u64 (%a\d+), (%a\d+), %a17;', r'mad.wide.u32 \1, %r1457, 4, \2;', tail)
        s=head+tail
    name=f'd{threads}_r{rows}_mb{mb}'+('_nodiv' if nodiv else '')+('_p32' if p32 else '')
    open(name+'.ptx','w').write(s)
variant(4,256,4,False)
for rows in (4,5,6):
    variant(rows,256,4,True); variant(rows,128,8,True); variant(rows,128,8,True,True)
variant(4,256,4,True,True)
variant(5,256,3,False); variant(6,256,3,False); variant(6,128,6,True)
