"""PTX variants of a 1D block tile's interior kernel (kernel 1 of main's printed module): how
the warps' edge exchange waits. Prints one file per variant; the harness times them."""
import re, sys
src, out = sys.argv[1], sys.argv[2]
text = open(src).read()
name = re.search(r'\.visible \.entry (\w+)\(', text).group(1)
start = text.index('.visible .entry')
end = text.index('.visible .entry', start + 1)
kernel = text[start:end]
header = text[:start]
ll = kernel.split('\n')

def exchange_blocks(lines):
    """[(bar index, first ld index, last ld index)] for each exchange."""
    res = []
    for i, l in enumerate(lines):
        if l.strip() == 'bar.sync 0;':
            j = i + 1
            while 'ld.shared' in lines[j]:
                j += 1
            res.append((i, i + 1, j))
    return res

def segment_end(lines, j):
    k = j
    while k < len(lines):
        s = lines[k].strip()
        if s.startswith('shfl.sync') or s.startswith('// step: the lane') or re.match(r'mov\.f32 %f0, ', s) or s.startswith('add.u32 %t10') or s.startswith('// whole tile') or s.startswith('$') or s.startswith('@%q') and 'bra' in s:
            return k
        k += 1
    return k

def regs(s):
    return re.findall(r'%[a-z]+\d+', s)

def reorder(lines, ld_lo, ld_hi, wait_lines, limit=10**9):
    """Moves the exchange's wait (wait_lines) and its loads below the segment's statements that
    do not read the loaded registers (transitively)."""
    loads = lines[ld_lo:ld_hi]
    tainted = set(regs(l.split(',')[0])[-1] for l in loads)
    seg_end = segment_end(lines, ld_hi)
    free, dep = [], []
    for l in lines[ld_hi:seg_end]:
        s = l.strip()
        if not s or s.startswith('//'):
            (dep if dep else free).append(l); continue
        rs = regs(s.split(None, 1)[1])
        dst, srcs = rs[0], rs[1:]
        if any(r in tainted for r in srcs) or len(free) >= limit:
            tainted.add(dst); dep.append(l)
        else:
            free.append(l)
    return free + wait_lines + loads + dep, seg_end

def variant(kind):
    lines = list(ll)
    # declarations and ids
    decl = next(i for i, l in enumerate(lines) if l.strip().startswith('.reg .b32 %t<'))
    lines.insert(decl + 1, '\t.reg .b32 %x<16>;\n\t.reg .pred %y<4>;')
    anchor = next(i for i, l in enumerate(lines) if re.match(r'\s*setp\.ne\.and\.u32 %q3, %t5, 7, %q1;', l))
    pro = []
    if kind != 'base' and not kind.startswith('late0'):
        pro += ['\tadd.u32 %x8, %t5, 7;', '\tand.b32 %x2, %x8, 7;', '\tadd.u32 %x3, %x2, 8;',
                '\tadd.u32 %x8, %t5, 1;', '\tand.b32 %x4, %x8, 7;', '\tadd.u32 %x5, %x4, 8;',
                '\tadd.u32 %x0, %t5, 0;', '\tadd.u32 %x1, %t5, 8;']
        if kind.startswith('ringpairs'):
            # pair v = (v, v+1 mod 8) is barrier v (+8 in buffer 1); even warps after then before
            pro += ['\tand.b32 %x9, %t5, 1;', '\tsetp.eq.u32 %y0, %x9, 0;',
                    '\tselp.b32 %x10, %x0, %x2, %y0;', '\tselp.b32 %x11, %x2, %x0, %y0;',
                    '\tselp.b32 %x12, %x1, %x3, %y0;', '\tselp.b32 %x13, %x3, %x1, %y0;']
    lines[anchor + 1:anchor + 1] = pro
    blocks = exchange_blocks(lines)
    # process from the last exchange up so indices stay valid
    for parity, (bar, lo, hi) in reversed(list(enumerate(blocks))):
        p = parity % 2
        if kind == 'base':
            continue
        if kind.startswith('late0'):
            before_bar, wait = [], ['\tbar.sync 0;']
        elif kind.startswith('ringpairs'):
            first, second = ('%x10', '%x11') if p == 0 else ('%x12', '%x13')
            before_bar, wait = [], [f'\tbar.sync {first}, 64;', f'\tbar.sync {second}, 64;']
        elif kind.startswith('prod'):
            own, bef, aft = ('%x0', '%x2', '%x4') if p == 0 else ('%x1', '%x3', '%x5')
            before_bar, wait = [f'\tbar.arrive {own}, 96;'], [f'\tbar.sync {bef}, 96;', f'\tbar.sync {aft}, 96;']
        late = '_late' in kind or kind.startswith('late0')
        if late:
            limit = int(kind.split('-')[1]) if '-' in kind else 10**9
            new, seg_end = reorder(lines, lo, hi, wait, limit)
            lines[bar:seg_end] = before_bar + new
        else:
            lines[bar:hi] = before_bar + wait + lines[lo:hi]
    return header + '\n'.join(lines)

for kind in sys.argv[3].split(','):
    open(f'{out}/{name}.{kind}.ptx', 'w').write(variant(kind))
