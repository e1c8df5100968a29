# Simulates named barriers (count-based, bar.arrive / bar.sync) for the ring protocol; checks
# no deadlock, and that every completion gathers the producer and both consumers of one step.
import random
def run(W, steps, order_rule, seed):
    rnd = random.Random(seed)
    def prog(w):
        b, a = (w - 1) % W, (w + 1) % W
        ops = []
        for s in range(steps):
            p = s % 2
            first, second = order_rule(w, b, a)
            ops += [('arrive', w + W * p, s), ('sync', first + W * p, s), ('sync', second + W * p, s)]
        return ops
    progs = [prog(w) for w in range(W)]
    pc = [0] * W
    waiting = [None] * W
    bars = {}  # id -> list of (warp, kind, step)
    while True:
        ready = [w for w in range(W) if pc[w] < len(progs[w]) and waiting[w] is None]
        if not ready:
            if all(pc[w] == len(progs[w]) for w in range(W)): return True
            return False  # deadlock
        w = rnd.choice(ready)
        kind, bid, s = progs[w][pc[w]]
        bars.setdefault(bid, []).append((w, kind, s))
        if kind == 'sync': waiting[w] = bid
        else: pc[w] += 1
        if len(bars[bid]) * 32 == 96:
            parts = bars.pop(bid)
            steps_ = {x[2] for x in parts}
            owner = bid % W
            assert steps_ == {parts[0][2]}, ('mixed steps', bid, parts)
            assert sorted(x[0] for x in parts) == sorted([owner, (owner - 1) % W, (owner + 1) % W]), ('wrong warps', parts)
            for x in parts:
                if x[1] == 'sync':
                    waiting[x[0]] = None; pc[x[0]] += 1
naive = lambda w, b, a: (b, a)
mod4 = lambda w, b, a: (b, a) if ((b + 3) & 2) == 0 else (a, b)
for W in (4, 8):
    for name, rule in (('naive', naive), ('mod4', mod4)):
        ok = all(run(W, 12, rule, seed) for seed in range(300))
        print(W, name, 'ok' if ok else 'DEADLOCK')
