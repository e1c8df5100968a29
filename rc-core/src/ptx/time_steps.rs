//! Printing what fused time steps add ([`crate::time_steps`]): the neighbour lanes' edges by
//! `shfl.sync.up`/`down`, the boundary rule after each step, the stores of the tile's centre.

use super::memory::Guard;
use super::rule::Last;
use super::types::{bits_type, immediate};
use super::{Printer, LANE, N, N_MINUS_1, N_OUT, SHARED_TILE, TID, TILE_START};
use crate::boundary::Boundary;
use crate::machine::{Op, Side, Stmt, TileTest};
use crate::program::Reg;
use crate::scalar::Scalar;
use crate::time_steps::BlockExchange;

/// A 1D block tile's registers for its exchanges through shared memory ([`BlockExchange`]),
/// set up once by the prologue.
pub(super) struct Exchange {
    layout: BlockExchange,
    /// Exchanges printed so far: the next one uses the buffer of its parity.
    printed: u32,
    /// Shared addresses of slot 0 of buffer 0: this hardware warp's, the warp before's and the
    /// warp after's.
    own: String,
    before: String,
    after: String,
    /// Hardware lanes 0 and 31 (they store the warp's edges), and those of them that load a
    /// neighbour warp's: lane 0 of every warp but the block's first, lane 31 of every warp but
    /// its last.
    first: String,
    last: String,
    from_before: String,
    from_after: String,
}

/// Where a 2D fused strip's lane meets the input's edges along x, as 32-bit masks (all ones
/// or zero): per element, under `clamp` whether it lies before the input and whether past it,
/// under `zero` whether inside it (twice); under `clamp` for input index 0 and `n - 1` (clamped
/// into the tile) the lane holding it and, per element but the first, whether it is that one.
#[derive(Clone, Debug)]
pub(super) struct EdgesX {
    elements: Vec<[String; 2]>,
    holders: Option<[(String, Vec<String>); 2]>,
}

impl Printer<'_> {
    /// A 1D block tile's exchange registers ([`Exchange`]); nothing for other programs.
    pub(super) fn exchange_prologue(&mut self) {
        let Some(tile) = self.program.fused.filter(|tile| tile.spans_block()) else { return };
        let layout = BlockExchange::of(&tile, &self.program.machine.body, self.program.element);
        self.comment("block tile: hardware warps swap their edge lanes' elements through shared memory");
        let (lane, warp) = (self.t(), self.t());
        self.line(&format!("and.b32 {lane}, {TID}, 31;"));
        self.line(&format!("shr.u32 {warp}, {TID}, 5;"));
        let (own, before, after) = (self.t(), self.t(), self.t());
        let stride = layout.offset(0, 1, 0);
        self.line(&format!("mov.u32 {own}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {own}, {warp}, {stride}, {own};"));
        self.line(&format!("sub.u32 {before}, {own}, {stride};"));
        self.line(&format!("add.u32 {after}, {own}, {stride};"));
        let (first, last, from_before, from_after) = (self.q(), self.q(), self.q(), self.q());
        self.line(&format!("setp.eq.u32 {first}, {lane}, 0;"));
        self.line(&format!("setp.eq.u32 {last}, {lane}, 31;"));
        self.line(&format!("setp.ne.and.u32 {from_before}, {warp}, 0, {first};"));
        self.line(&format!("setp.ne.and.u32 {from_after}, {warp}, {}, {last};", layout.warps - 1));
        self.exchange = Some(Exchange { layout, printed: 0, own, before, after, first, last, from_before, from_after });
    }

    /// A block tile's run of [`Op::Neighbour`]s as one exchange: each move's shuffle inside the
    /// hardware warp; then the warp's edge lanes store the sources their neighbour warps'
    /// edge lanes read (lane 31 what the next warp's lane 0 reads as "before", lane 0 what the
    /// previous warp's lane 31 reads as "after"), one barrier, and those lanes load them over
    /// what the shuffle gave. The block's first and last lanes keep their own, as a warp's do.
    pub(super) fn exchange_run(&mut self, run: &[Stmt]) {
        let moves: Vec<(Reg, Reg, Side)> = run
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Op(Op::Neighbour { dst, src, from }) => Some((*dst, *src, *from)),
                _ => None,
            })
            .collect();
        for &(dst, src, from) in &moves {
            self.neighbour(dst, src, from);
        }
        let Some(exchange) = self.exchange.as_mut() else { return };
        let parity = exchange.printed % 2;
        exchange.printed += 1;
        let (layout, own, before, after) =
            (exchange.layout, exchange.own.clone(), exchange.before.clone(), exchange.after.clone());
        let (first, last, from_before, from_after) =
            (exchange.first.clone(), exchange.last.clone(), exchange.from_before.clone(), exchange.from_after.clone());
        let ty = format!("b{}", self.program.element.info().register_bits);
        self.comment(&format!("block tile: the warps' edges through shared memory, buffer {parity}"));
        let sides: Vec<Side> = moves.iter().map(|&(_, _, from)| from).collect();
        let accesses = layout.accesses(&sides);
        for &(slot, width) in &accesses {
            let range = slot as usize..(slot + width) as usize;
            let lane = match sides[slot as usize] {
                Side::Before => &last,
                Side::After => &first,
            };
            let srcs: Vec<String> = moves[range].iter().map(|&(_, src, _)| self.reg(src)).collect();
            self.access(
                &format!("st.shared.{ty}"),
                &srcs,
                &format!("{own}+{}", layout.offset(parity, 0, slot)),
                Guard::Only(lane),
                0,
            );
        }
        self.line("bar.sync 0;");
        for &(slot, width) in &accesses {
            let range = slot as usize..(slot + width) as usize;
            let (lane, warp) = match sides[slot as usize] {
                Side::Before => (&from_before, &before),
                Side::After => (&from_after, &after),
            };
            let dsts: Vec<String> = moves[range].iter().map(|&(dst, _, _)| self.reg(dst)).collect();
            self.access(
                &format!("ld.shared.{ty}"),
                &dsts,
                &format!("{warp}+{}", layout.offset(parity, 0, slot)),
                Guard::Only(lane),
                0,
            );
        }
    }

    /// Exchanges printed so far (0 where the program has none).
    pub(super) fn exchanges_printed(&self) -> u32 {
        self.exchange.as_ref().map_or(0, |exchange| exchange.printed)
    }

    /// The end of a loop's body whose exchanges began at `before`: an odd number of them would
    /// start the next iteration on the buffer the last one used, which a slower warp may still
    /// be loading, so a barrier ends such a body.
    pub(super) fn exchange_loop_end(&mut self, before: u32) {
        if (self.exchanges_printed() - before) % 2 == 1 {
            self.line("bar.sync 0;");
        }
    }

    /// `dst` = `src` of the lane before or after; a lane without one keeps its own (the
    /// segment's clamp in `c`; a block tile's hardware warp is its segment).
    pub(super) fn neighbour(&mut self, dst: Reg, src: Reg, from: Side) {
        let warp = self.program.pattern.warp().min(32);
        let segment = (32 - warp) << 8;
        let (mode, c, what) = match from {
            Side::Before => ("up", segment, "the lane before's"),
            Side::After => ("down", segment | 0x1f, "the lane after's"),
        };
        self.comment(&format!("step: {what} edge element"));
        let (d, s) = (self.reg(dst), self.reg(src));
        self.shfl(mode, &d, &s, "1", c, self.program.element.register_bits());
    }

    /// The input index of the lane's first element: `tile_start - lead + lane * k`.
    fn owned_start(&mut self, k: u32) -> String {
        let start = self.a();
        self.line(&format!("mul.wide.u32 {start}, {LANE}, {k};"));
        self.line(&format!("add.s64 {start}, {start}, {TILE_START};"));
        let lead = self.program.schedule.lead;
        if lead > 0 {
            self.line(&format!("sub.s64 {start}, {start}, {lead};"));
        }
        start
    }

    /// The lane holding input index `index` clamped into the tile, and which of its `k`
    /// elements it is (32-bit registers).
    fn holder(&mut self, index: &str, k: u32) -> (String, String) {
        let warp = self.program.pattern.warp();
        let e = self.a();
        self.line(&format!("sub.s64 {e}, {index}, {TILE_START};"));
        let lead = self.program.schedule.lead;
        if lead > 0 {
            self.line(&format!("add.s64 {e}, {e}, {lead};"));
        }
        self.line(&format!("max.s64 {e}, {e}, 0;"));
        self.line(&format!("min.s64 {e}, {e}, {};", warp * k - 1));
        let (e32, lane, j) = (self.t(), self.t(), self.t());
        self.line(&format!("cvt.u32.u64 {e32}, {e};"));
        self.line(&format!("div.u32 {lane}, {e32}, {k};"));
        self.line(&format!("rem.u32 {j}, {e32}, {k};"));
        (lane, j)
    }

    /// The step's value at input index `index` (`0` or `n - 1`, edge `edge`), from the lane
    /// holding it: the index clamped into the tile, its lane's register picked by selects, then
    /// broadcast (a block tile's through its edge slot in shared memory).
    fn edge_value(&mut self, values: &[Reg], index: &str, edge: u32) -> String {
        let (k, warp) = (values.len() as u32, self.program.pattern.warp());
        let element = self.program.element;
        let ty = bits_type(element);
        let (lane, j) = self.holder(index, k);
        let picked = self.scratch(element);
        self.line(&format!("mov.{ty} {picked}, {};", self.reg(values[0])));
        for (m, &value) in values.iter().enumerate().skip(1) {
            let q = self.q();
            self.line(&format!("setp.eq.u32 {q}, {j}, {m};"));
            self.line(&format!("selp.{ty} {picked}, {}, {picked}, {q};", self.reg(value)));
        }
        if let Some(slot) = self.exchange.as_ref().map(|exchange| exchange.layout.edge_offset(edge)) {
            let (base, holds, value) = (self.t(), self.q(), self.scratch(element));
            let ty = format!("b{}", element.info().register_bits);
            self.line(&format!("mov.u32 {base}, {SHARED_TILE};"));
            self.line(&format!("setp.eq.u32 {holds}, {LANE}, {lane};"));
            self.line(&format!("@{holds} st.shared.{ty} [{base}+{slot}], {picked};"));
            self.line("bar.sync 0;");
            self.line(&format!("ld.shared.{ty} {value}, [{base}+{slot}];"));
            return value;
        }
        let c = ((32 - warp) << 8) | 0x1f;
        let edge = self.scratch(element);
        self.shfl("idx", &edge, &picked, &lane, c, element.register_bits());
        edge
    }

    /// The boundary rule after a step: each element outside `0..n` set to zero (`zero`) or to
    /// the step's value at the nearest edge (`clamp`).
    pub(super) fn step_rule(&mut self, values: &[Reg], dsts: &[Reg]) {
        if let Some(edges) = self.edges_x.take() {
            self.step_rule_masked(values, dsts, &edges);
            self.edges_x = Some(edges);
            return;
        }
        let boundary = self.program.pattern.boundary();
        let element = self.program.element;
        let ty = bits_type(element);
        self.comment(&format!("boundary rule `{boundary}` on the elements outside the input"));
        let start = self.owned_start(values.len() as u32);
        let edges = match boundary {
            Boundary::Clamp => {
                let (first, last) = (self.a(), self.a());
                self.line(&format!("mov.u64 {first}, 0;"));
                self.line(&format!("sub.s64 {last}, {N}, 1;"));
                Some((self.edge_value(values, &first, 0), self.edge_value(values, &last, 1)))
            }
            _ => None,
        };
        let zero = immediate(Scalar::new(element, 0));
        for (j, (&value, &dst)) in values.iter().zip(dsts).enumerate() {
            let (g, below, above) = (self.a(), self.q(), self.q());
            self.line(&format!("add.s64 {g}, {start}, {j};"));
            self.line(&format!("setp.lt.s64 {below}, {g}, 0;"));
            self.line(&format!("setp.ge.s64 {above}, {g}, {N};"));
            let (d, v) = (self.reg(dst), self.reg(value));
            match &edges {
                Some((first, last)) => {
                    self.line(&format!("selp.{ty} {d}, {first}, {v}, {below};"));
                    self.line(&format!("selp.{ty} {d}, {last}, {d}, {above};"));
                }
                None => {
                    self.line(&format!("or.pred {below}, {below}, {above};"));
                    self.line(&format!("selp.{ty} {d}, {zero}, {v}, {below};"));
                }
            }
        }
    }

    /// Where the fallback path of a 2D fused strip's [`TileTest::Inside`] branch starts: what
    /// its rules along x share ([`Printer::edges_x`]), if it has any and its elements are 32-bit
    /// (3D fused tiles, and 64- and 16-bit elements, print the rule as 1D does).
    pub(super) fn rule_path_start(&mut self, test: TileTest, fallback: &[Stmt]) {
        fn first_rule(stmts: &[Stmt]) -> Option<u32> {
            stmts.iter().find_map(|stmt| match stmt {
                Stmt::Op(Op::StepRule { values, .. }) => Some(values.len() as u32),
                Stmt::Op(_) => None,
                Stmt::Branch { taken, fallback, .. } => first_rule(fallback).or_else(|| first_rule(taken)),
                Stmt::Loop { body, .. } => first_rule(body),
            })
        }
        let words = self.program.element.info().register_bits == 32;
        let two = self.program.pattern.dims() == crate::geometry::Dims::Two;
        if let (TileTest::Inside { .. }, true, true, Some(k)) = (test, two, words, first_rule(fallback)) {
            self.edges_x(k);
        }
    }

    /// Where a 2D strip's rows meet the input's edges along x ([`EdgesX`]), for lanes of `k`
    /// elements: the same for every row and step of the tile, so computed once, where the path
    /// starts.
    fn edges_x(&mut self, k: u32) {
        let boundary = self.program.pattern.boundary();
        self.comment("where the tile's rows meet the input's edges along x: the same in every row and step");
        let start = self.owned_start(k);
        // The lane's elements before the input, and those not past it (each clamped to 0..=k).
        let count = |p: &mut Self, from: &str| -> String {
            let (e, e32) = (p.a(), p.t());
            p.line(&format!("sub.s64 {e}, {from}, {start};"));
            p.line(&format!("max.s64 {e}, {e}, 0;"));
            p.line(&format!("min.s64 {e}, {e}, {k};"));
            p.line(&format!("cvt.u32.u64 {e32}, {e};"));
            e32
        };
        let zero = self.a();
        self.line(&format!("mov.u64 {zero}, 0;"));
        let (below, inside) = (count(self, &zero), count(self, N));
        let mask = |p: &mut Self, test: &str, value: &str, j: u32| -> String {
            let (q, m) = (p.q(), p.t());
            p.line(&format!("setp.{test}.u32 {q}, {value}, {j};"));
            p.line(&format!("selp.b32 {m}, -1, 0, {q};"));
            m
        };
        let elements = (0..k)
            .map(|j| match boundary {
                Boundary::Clamp => [mask(self, "gt", &below, j), mask(self, "le", &inside, j)],
                _ => {
                    let (q, m) = (self.q(), self.t());
                    self.line(&format!("setp.gt.u32 {q}, {below}, {j};"));
                    self.line(&format!("setp.le.or.u32 {q}, {inside}, {j}, {q};"));
                    self.line(&format!("selp.b32 {m}, 0, -1, {q};"));
                    [m.clone(), m]
                }
            })
            .collect();
        // Under `clamp`: the lane holding input index `index` (clamped into the tile), and a
        // mask per element but the first saying whether it is that lane's.
        let holder = |p: &mut Self, index: &str| -> (String, Vec<String>) {
            let (lane, j) = p.holder(index, k);
            let picks = (1..k).map(|m| mask(p, "eq", &j, m)).collect();
            (lane, picks)
        };
        let holders = match boundary {
            Boundary::Clamp => Some([holder(self, &zero), holder(self, N_MINUS_1)]),
            _ => None,
        };
        self.edges_x = Some(EdgesX { elements, holders });
    }

    /// [`Printer::step_rule`] in a 2D strip of 32-bit elements: bitwise selects by the masks
    /// [`Printer::edges_x`] computed where the path starts, so no predicate stays live across
    /// steps (ptxas kept the tests' predicates by packing them into registers and back, more
    /// instructions than the rule itself).
    fn step_rule_masked(&mut self, values: &[Reg], dsts: &[Reg], edges: &EdgesX) {
        let (boundary, element) = (self.program.pattern.boundary(), self.program.element);
        let c = ((32 - self.program.pattern.warp()) << 8) | 0x1f;
        self.comment(&format!("boundary rule `{boundary}` on the elements outside the input"));
        // lop3 0xd8: (a & ~c) | (b & c), b where the mask c is set.
        let broadcast = |p: &mut Self, (lane, picks): &(String, Vec<String>)| -> String {
            let picked = p.scratch(element);
            p.line(&format!("mov.b32 {picked}, {};", p.reg(values[0])));
            for (&value, pick) in values.iter().skip(1).zip(picks) {
                p.line(&format!("lop3.b32 {picked}, {picked}, {}, {pick}, 0xd8;", p.reg(value)));
            }
            let edge = p.scratch(element);
            p.line(&format!("shfl.sync.idx.b32 {edge}, {picked}, {lane}, {c}, 0xffffffff;"));
            edge
        };
        let at_edges = edges.holders.as_ref().map(|[first, last]| (broadcast(self, first), broadcast(self, last)));
        for ((&value, &dst), [before, past]) in values.iter().zip(dsts).zip(&edges.elements) {
            let (d, v) = (self.reg(dst), self.reg(value));
            match &at_edges {
                Some((first, last)) => {
                    self.line(&format!("lop3.b32 {d}, {v}, {first}, {before}, 0xd8;"));
                    self.line(&format!("lop3.b32 {d}, {d}, {last}, {past}, 0xd8;"));
                }
                None => self.line(&format!("and.b32 {d}, {v}, {before};")),
            }
        }
    }

    /// The lane's elements that are tile outputs (`lane * k + j - lead` in `0..tile_outputs`) of
    /// output field `field`, each stored where it exists, or in vectors of `width` on a whole
    /// tile.
    pub(super) fn store_owned(&mut self, srcs: &[Reg], field: u32, lead: u32, width: u32, row: u32) {
        let bytes = self.program.element.bytes();
        let (k, outputs) = (srcs.len() as u32, self.program.pattern.tile_outputs());
        let (of_field, base) = (self.of_output_field(field), self.output(field));
        self.comment(&format!(
            "store the tile's outputs{of_field}: element l * {k} + j is tile output l * {k} + j - {lead}"
        ));
        let first = self.a();
        self.line(&format!("mul.wide.u32 {first}, {LANE}, {k};"));
        self.line(&format!("sub.s64 {first}, {first}, {lead};"));
        // 2D/3D: output row `row` of the tile, which may not exist (it does where vectors are
        // stored).
        let row = self.grid.is_some().then(|| self.output_row_source(row));
        for (c, chunk) in srcs.chunks(width as usize).enumerate() {
            let (o, i, q) = (self.a(), self.a(), self.q());
            self.line(&format!("add.s64 {o}, {first}, {};", c as u32 * width));
            self.line(&format!("setp.ge.s64 {q}, {o}, 0;"));
            self.line(&format!("setp.lt.and.s64 {q}, {o}, {outputs}, {q};"));
            self.line(&format!("add.s64 {i}, {o}, {TILE_START};"));
            if width == 1 {
                self.line(&format!("setp.lt.and.u64 {q}, {i}, {N_OUT}, {q};"));
            }
            let addr = match row.as_ref() {
                // The lane's address in row 0 first, the same in every row, then the row's offset.
                Some((row, _)) if width > 1 => {
                    let (lane, at) = (self.address(&base, &i, bytes), self.a());
                    self.line(&format!("mad.lo.s64 {at}, {row}, {bytes}, {lane};"));
                    at
                }
                Some((row, exists)) => {
                    self.line(&format!("and.pred {q}, {q}, {exists};"));
                    self.line(&format!("add.s64 {i}, {i}, {row};"));
                    self.address(&base, &i, bytes)
                }
                None => self.address(&base, &i, bytes),
            };
            let regs: Vec<String> = chunk.iter().map(|&r| self.reg(r)).collect();
            self.write_elements("global", &addr, &regs, Some(&q));
        }
    }
}

impl Printer<'_> {
    /// Fused time steps in 3D: each of a plane's `rows` (box rows `first..`) read through the boundary
    /// rule along y into `dsts`: zero outside the input, or under `clamp` the row of `rows` at
    /// the nearest edge (itself where that is not among them).
    pub(super) fn plane_rows_rule(&mut self, rows: &[Vec<Reg>], first: u32, dsts: &[Vec<Reg>]) {
        let boundary = self.program.pattern.boundary();
        let ty = bits_type(self.program.element);
        self.comment(&format!("boundary rule `{boundary}` along y on box rows {first}..{}", first + rows.len() as u32));
        let (y0, in_y) = self.box_row_y(first);
        let zero = immediate(Scalar::new(self.program.element, 0));
        for (j, dst) in dsts.iter().enumerate() {
            let y = self.a();
            self.line(&format!("add.s64 {y}, {y0}, {j};"));
            let inside = self.coordinate_inside(&y, &in_y, None);
            let picks: Vec<(String, usize)> = match boundary {
                Boundary::Clamp => {
                    // m = clamp(y) - y0: the window row that holds the nearest edge row.
                    let m = self.a();
                    self.clamp_coordinate(&m, &y, &in_y, Last::Less(1));
                    self.line(&format!("sub.s64 {m}, {m}, {y0};"));
                    (0..rows.len())
                        .filter(|&other| other != j)
                        .map(|other| {
                            let q = self.q();
                            self.line(&format!("setp.eq.s64 {q}, {m}, {other};"));
                            (q, other)
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            for (e, &d) in dst.iter().enumerate() {
                let (d, own) = (self.reg(d), self.reg(rows[j][e]));
                match boundary {
                    Boundary::Clamp => {
                        self.line(&format!("mov.{ty} {d}, {own};"));
                        for (q, other) in &picks {
                            self.line(&format!("@{q} mov.{ty} {d}, {};", self.reg(rows[*other][e])));
                        }
                    }
                    _ => self.line(&format!("selp.{ty} {d}, {own}, {zero}, {inside};")),
                }
            }
        }
    }

    /// Fused time steps in 2D: the boundary rule along y on a step's new row ([`Op::RowRule`]):
    /// predicated moves, zero outside the input (`zero`), or (`clamp`) the window's newest row
    /// into a row below the input and the input's first row into every row of the window.
    pub(super) fn row_rule(&mut self, row: &[Reg], window: &[Vec<Reg>], at: u32, first: bool) {
        let boundary = self.program.pattern.boundary();
        let ty = bits_type(self.program.element);
        self.comment(&format!("boundary rule `{boundary}` along y on the new row, box row {at}"));
        let (y, in_y) = self.box_row_y(at);
        let q = self.q();
        match boundary {
            Boundary::Clamp => {
                if let Some(newest) = window.last() {
                    self.line(&format!("setp.ge.s64 {q}, {y}, {in_y};"));
                    for (&d, &s) in row.iter().zip(newest) {
                        self.line(&format!("@{q} mov.{ty} {}, {};", self.reg(d), self.reg(s)));
                    }
                }
                if !first || window.is_empty() {
                    return;
                }
                let top = self.q();
                self.line(&format!("setp.eq.s64 {top}, {y}, 0;"));
                for above in window {
                    for (&d, &s) in above.iter().zip(row) {
                        self.line(&format!("@{top} mov.{ty} {}, {};", self.reg(d), self.reg(s)));
                    }
                }
            }
            _ => {
                let zero = immediate(Scalar::new(self.program.element, 0));
                self.line(&format!("setp.ge.u64 {q}, {y}, {in_y};"));
                for &d in row {
                    self.line(&format!("@{q} mov.{ty} {}, {zero};", self.reg(d)));
                }
            }
        }
    }
}

impl Printer<'_> {
    /// Fused time steps in 3D: each of `planes` (box planes `first..`) read through the
    /// boundary rule along z, in place: zero outside the input, or under `clamp` the plane of
    /// `planes` at the nearest edge (unchanged where that is not among them). The planes copied
    /// from lie inside, so no copy reads a plane this changed.
    pub(super) fn plane_rule(&mut self, planes: &[Vec<Reg>], first: u32) {
        let boundary = self.program.pattern.boundary();
        let ty = bits_type(self.program.element);
        self.comment(&format!(
            "boundary rule `{boundary}` along z on box planes {first}..{}",
            first + planes.len() as u32
        ));
        let (z0, in_z) = self.box_plane_z(first);
        let zero = immediate(Scalar::new(self.program.element, 0));
        for (j, plane) in planes.iter().enumerate() {
            let z = self.a();
            self.line(&format!("add.s64 {z}, {z0}, {j};"));
            let inside = self.coordinate_inside(&z, &in_z, None);
            match boundary {
                Boundary::Clamp => {
                    // m = clamp(z) - z0: the window plane that holds the nearest edge plane.
                    let m = self.a();
                    self.clamp_coordinate(&m, &z, &in_z, Last::Less(1));
                    self.line(&format!("sub.s64 {m}, {m}, {z0};"));
                    for (other, edge) in planes.iter().enumerate().filter(|&(other, _)| other != j) {
                        let q = self.q();
                        self.line(&format!("setp.eq.s64 {q}, {m}, {other};"));
                        for (&d, &e) in plane.iter().zip(edge) {
                            self.line(&format!("@{q} mov.{ty} {}, {};", self.reg(d), self.reg(e)));
                        }
                    }
                }
                _ => {
                    for &d in plane {
                        let d = self.reg(d);
                        self.line(&format!("selp.{ty} {d}, {d}, {zero}, {inside};"));
                    }
                }
            }
        }
    }
}
