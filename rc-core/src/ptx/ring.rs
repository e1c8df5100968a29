//! Printing staged planes ([`crate::ring`]): the block's plane fetches into registers, their
//! puts into ring slots, the block barriers, the lanes' window reads and the ring's phase.

use super::grid::{FetchVector, RingRegs};
use super::memory::Guard;
use super::rule::Last;
use super::{Buffer, Printer, LANE, N, N_MINUS_1, SHARED_TILE, TID};
use crate::boundary::Boundary;
use crate::distribution::AffineLoad;
use crate::program::Reg;
use crate::ring::{PlaneRing, RingPart};

/// What one thread fetched of a plane: per round, its registers and the predicate that it
/// copies a vector in that round at all (`None`: every thread does).
pub(super) type Fetched = Vec<(Vec<String>, Option<String>)>;

impl Printer<'_> {
    fn plane_ring(&self) -> (PlaneRing, RingRegs) {
        let ring = self.program.ring.expect("a kernel of staged planes");
        let regs = self.grid.as_ref().and_then(|g| g.ring.clone()).expect("the ring's registers");
        (ring, regs)
    }

    /// The slot `(phase + plane) mod slots` (u32); `plane < slots`.
    fn ring_slot(&mut self, phase: &str, plane: u32, slots: u32) -> String {
        let (s, q) = (self.t(), self.q());
        self.line(&format!("add.u32 {s}, {phase}, {plane};"));
        self.line(&format!("setp.ge.u32 {q}, {s}, {slots};"));
        self.line(&format!("@{q} sub.u32 {s}, {s}, {slots};"));
        s
    }

    /// Where thread t's copy vector of round `round` lies in every plane: its input row y and
    /// first element's x (s64; rows from `first_row`, elements from `first_x`).
    fn vector_place(&mut self, round: u32, first_row: &str, first_x: &str) -> (String, String) {
        let ring = self.program.ring.expect("a kernel of staged planes");
        let (cpr, width) = (ring.chunks_per_row(), ring.width);
        let (c, row, col) = (self.t(), self.t(), self.t());
        self.line(&format!("add.u32 {c}, {TID}, {};", round * ring.threads));
        self.line(&format!("div.u32 {row}, {c}, {cpr};"));
        self.line(&format!("mul.lo.u32 {col}, {row}, {cpr};"));
        self.line(&format!("sub.u32 {col}, {c}, {col};"));
        let (y, x) = (self.a(), self.a());
        self.line(&format!("cvt.u64.u32 {y}, {row};"));
        self.line(&format!("add.s64 {y}, {y}, {first_row};"));
        self.line(&format!("mul.wide.u32 {x}, {col}, {width};"));
        self.line(&format!("add.s64 {x}, {x}, {first_x};"));
        (y, x)
    }

    /// Where thread t's copy vectors t, t + T, ... of every plane lie (input rows from
    /// `first_row` of `in_y`, elements from `first_x`): once, before the plane loop, as all but
    /// the plane's z is the same at every plane. Each vector's byte offset in its plane is taken
    /// under the rules along y and x for rows of whole vectors: an outside vector under `clamp`
    /// reads the edge vector (its edge element is spread at the put), under `wrap` the wrapped
    /// one, under `valid` and `zero` the nearest (zeroed by `live`).
    pub(super) fn fetch_vectors(&mut self, first_row: &str, first_x: &str, in_y: &str) -> Vec<FetchVector> {
        let ring = self.program.ring.expect("a kernel of staged planes");
        let boundary = self.program.pattern.boundary();
        let bytes = self.program.element.bytes();
        self.comment(&format!(
            "the ring's copy: thread t copies vectors t, t + {} ... of each plane's {} rows of {}",
            ring.threads,
            ring.rows,
            ring.chunks_per_row()
        ));
        let (last_y, last_x) = (self.a(), self.a());
        self.line(&format!("sub.s64 {last_y}, {in_y}, 1;"));
        self.line(&format!("sub.s64 {last_x}, {N}, {};", ring.width));
        // Under `clamp`, two bits per round (16 rounds a register): its vector lies before the
        // row's start, or past its end (the put spreads the edge element).
        let spreads = boundary == Boundary::Clamp && ring.width > 1;
        let mut sides: Option<String> = None;
        let mut vectors = Vec::new();
        for round in 0..ring.rounds() {
            let (y, x) = self.vector_place(round, first_row, first_x);
            let guard = ((round + 1) * ring.threads > ring.chunks()).then(|| {
                let q = self.q();
                self.line(&format!("setp.lt.u32 {q}, {TID}, {};", ring.chunks() - round * ring.threads));
                q
            });
            let side = spreads.then(|| {
                let bit = 2 * (round % 16);
                let mask = match (&sides, bit) {
                    (Some(mask), 2..) => mask.clone(),
                    _ => {
                        let mask = self.t();
                        self.line(&format!("mov.u32 {mask}, 0;"));
                        sides = Some(mask.clone());
                        mask
                    }
                };
                let q = self.q();
                self.line(&format!("setp.lt.s64 {q}, {x}, 0;"));
                self.line(&format!("@{q} or.b32 {mask}, {mask}, {};", 1u32 << bit));
                self.line(&format!("setp.ge.s64 {q}, {x}, {N};"));
                self.line(&format!("@{q} or.b32 {mask}, {mask}, {};", 2u32 << bit));
                (mask, bit)
            });
            let (ry, rx) = (self.a(), self.a());
            self.line(&format!("mov.s64 {ry}, {y};"));
            self.line(&format!("mov.s64 {rx}, {x};"));
            // Along x the vector's last place is the row's last vector (rows are whole vectors).
            let y_inside = self.rule_coordinate(&ry, in_y, Last::In(&last_y), None);
            let x_inside = self.rule_coordinate(&rx, N, Last::In(&last_x), None);
            if y_inside.is_some() {
                // `valid` and `zero`: an outside vector reads the nearest one, zeroed by `live`.
                self.clamp_coordinate(&ry, &ry, in_y, Last::In(&last_y));
                self.clamp_coordinate(&rx, &rx, N, Last::In(&last_x));
            }
            let live = self.both(y_inside, x_inside);
            let offset = self.a();
            self.line(&format!("mad.lo.s64 {offset}, {ry}, {N}, {rx};"));
            self.line(&format!("mul.lo.s64 {offset}, {offset}, {bytes};"));
            vectors.push(FetchVector { offset, side, live, guard });
        }
        vectors
    }

    /// Thread t reads copy vectors t, t + T, ... of box plane `plane` of input field `field`
    /// into registers. Where rows are whole vectors, one load each from the offset the prologue
    /// took under the rules along y and x, in the plane under the rule along z; nothing reads
    /// them before the put (which spreads `clamp`'s edge elements), so their latency hides
    /// behind the step's taps. Else element by element under the rule in each dimension.
    pub(super) fn fetch_plane(&mut self, plane: u32, field: u32) {
        let (ring, regs) = self.plane_ring();
        let grid = self.grid.clone().expect("3D");
        let (in_z, tile_z) = (grid.in_z.clone().expect("3D"), grid.tile_z.clone().expect("3D"));
        let program = self.program;
        let pattern = program.pattern;
        let (element, bytes, width) = (program.element, program.element.bytes(), ring.width);
        let of_field = self.of_field(field);
        self.comment(&format!(
            "fetch box plane {plane}{of_field}: the block's {} rows of {} elements, thread t copies vectors t, t + {} ...",
            ring.rows, ring.row_elements, ring.threads
        ));
        let z = self.a();
        self.line(&format!("add.s64 {z}, {tile_z}, {};", plane as i64 - pattern.shift_along(2) as i64));
        let rounds: Vec<Vec<String>> =
            regs.vectors.iter().map(|_| (0..width).map(|_| self.scratch(element)).collect()).collect();
        let last_z = self.a();
        self.line(&format!("sub.s64 {last_z}, {in_z}, 1;"));
        let zz = self.a();
        self.line(&format!("mov.s64 {zz}, {z};"));
        let z_inside = self.rule_coordinate(&zz, &in_z, Last::In(&last_z), None);
        let (elements, fetched) = (self.label("plane_elements"), self.label("plane_fetched"));
        if let Some(aligned) = &grid.in_aligned {
            self.line(&format!("@!{aligned} bra {elements};"));
        }
        self.comment("rows of whole vectors: one load per vector, at its offset in the plane");
        if z_inside.is_some() {
            self.clamp_coordinate(&zz, &zz, &in_z, Last::In(&last_z));
        }
        let base = self.a();
        self.line(&format!("mul.lo.s64 {base}, {zz}, {};", grid.in_y));
        self.line(&format!("mul.lo.s64 {base}, {base}, {N};"));
        self.line(&format!("mad.lo.s64 {base}, {base}, {bytes}, {};", self.input(field)));
        for (values, vector) in rounds.iter().zip(&regs.vectors) {
            let addr = self.a();
            self.line(&format!("add.s64 {addr}, {base}, {};", vector.offset));
            match self.both(z_inside.clone(), vector.live.clone()) {
                Some(live) => self.read_elements("global.nc", values, &addr, Guard::Zeroed(&live)),
                None => self.read_elements(
                    "global.nc",
                    values,
                    &addr,
                    vector.guard.as_deref().map_or(Guard::All, Guard::Only),
                ),
            }
        }
        if grid.in_aligned.is_some() {
            self.line(&format!("bra {fetched};"));
            self.label_line(&elements);
            self.comment("element by element under the boundary rule");
            let last_y = self.a();
            self.line(&format!("sub.s64 {last_y}, {}, 1;", grid.in_y));
            for (round, (values, vector)) in rounds.iter().zip(&regs.vectors).enumerate() {
                let (yy, x) = self.vector_place(round as u32, &regs.first_row, &regs.first_x);
                let y_inside = self.rule_coordinate(&yy, &grid.in_y, Last::In(&last_y), None);
                let row = self.a();
                self.line(&format!("mad.lo.s64 {row}, {zz}, {}, {yy};", grid.in_y));
                self.line(&format!("mul.lo.s64 {row}, {row}, {N};"));
                let row_guard = self.both(z_inside.clone(), y_inside);
                let row_guard = self.both(row_guard, vector.guard.clone());
                // A vector inside along x is its row's elements from x on: one address. (Each
                // round its own branch, which also keeps ptxas from hoisting every round's
                // addresses above all of the loads: 108 registers against 96 for 4 x 4 star r = 1.)
                let (each, done) = (self.label("vector_elements"), self.label("vector_fetched"));
                let (inside, end) = (self.q(), self.a());
                self.line(&format!("add.s64 {end}, {x}, {width};"));
                self.line(&format!("setp.ge.s64 {inside}, {x}, 0;"));
                self.line(&format!("setp.le.and.s64 {inside}, {end}, {N}, {inside};"));
                self.line(&format!("@!{inside} bra {each};"));
                let g = self.a();
                self.line(&format!("add.s64 {g}, {x}, {row};"));
                let addr = self.address(&self.input(field), &g, bytes);
                for (k, value) in values.iter().enumerate() {
                    self.read_elements(
                        "global.nc",
                        std::slice::from_ref(value),
                        &format!("{addr}+{}", k as u32 * bytes),
                        row_guard.as_deref().map_or(Guard::All, Guard::Zeroed),
                    );
                }
                self.line(&format!("bra {done};"));
                self.label_line(&each);
                for (k, value) in values.iter().enumerate() {
                    let g = self.a();
                    self.line(&format!("add.s64 {g}, {x}, {k};"));
                    let x_inside = self.rule_coordinate(&g, N, Last::In(N_MINUS_1), None);
                    let guard = self.both(row_guard.clone(), x_inside);
                    self.line(&format!("add.s64 {g}, {g}, {row};"));
                    let addr = self.address(&self.input(field), &g, bytes);
                    self.read_elements(
                        "global.nc",
                        std::slice::from_ref(value),
                        &addr,
                        guard.as_deref().map_or(Guard::All, Guard::Zeroed),
                    );
                }
                self.label_line(&done);
            }
            self.label_line(&fetched);
        }
        let guards = regs.vectors.iter().map(|v| v.guard.clone());
        self.ring_fetched.insert(field, rounds.into_iter().zip(guards).collect());
    }

    /// Under `clamp`, where the block's rows reach past the input along x: each vector wholly
    /// outside holds its row's edge element four times (it was fetched as the edge vector).
    /// Done at the put, which waits for the fetch anyway: spread right after the load, the
    /// copies made every warp of an edge block wait for its plane before the step's taps.
    fn spread_edges(&mut self, rounds: &Fetched) {
        let (ring, regs) = self.plane_ring();
        if self.program.pattern.boundary() != Boundary::Clamp || ring.width == 1 {
            return;
        }
        let bits = self.program.element.register_bits();
        let (spread, inside) = (self.q(), self.label("plane_inside"));
        let end = self.a();
        self.comment("vectors past the row's ends hold its edge element");
        self.line(&format!("add.s64 {end}, {}, {};", regs.first_x, ring.row_elements));
        self.line(&format!("setp.lt.s64 {spread}, {}, 0;", regs.first_x));
        self.line(&format!("setp.gt.or.s64 {spread}, {end}, {N}, {spread};"));
        self.line(&format!("@!{spread} bra {inside};"));
        for ((values, _), vector) in rounds.iter().zip(&regs.vectors) {
            let Some((mask, bit)) = &vector.side else { continue };
            let (before, after, t) = (self.q(), self.q(), self.t());
            self.line(&format!("and.b32 {t}, {mask}, {};", 1u32 << bit));
            self.line(&format!("setp.ne.u32 {before}, {t}, 0;"));
            self.line(&format!("and.b32 {t}, {mask}, {};", 2u32 << bit));
            self.line(&format!("setp.ne.u32 {after}, {t}, 0;"));
            let (first, last) = (&values[0], &values[values.len() - 1]);
            for value in &values[1..] {
                self.line(&format!("@{before} mov.b{bits} {value}, {first};"));
            }
            for value in &values[..values.len() - 1] {
                self.line(&format!("@{after} mov.b{bits} {value}, {last};"));
            }
        }
        self.label_line(&inside);
    }

    /// Thread t writes what it fetched of input field `field` into ring slot
    /// `(phase + slot) mod slots`: copy vector c at plane position `c * width`.
    pub(super) fn put_plane(&mut self, slot: u32, field: u32) {
        let (ring, regs) = self.plane_ring();
        let Some(rounds) = self.ring_fetched.remove(&field) else { return };
        self.spread_edges(&rounds);
        let bytes = self.program.element.bytes();
        let of_field = self.of_field(field);
        self.comment(&format!("put the fetched plane{of_field} in ring slot (phase + {slot}) mod {}", ring.slots));
        let s = self.ring_slot(&regs.phase, slot, ring.slots);
        let addr = self.t();
        self.line(&format!("mov.u32 {addr}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {addr}, {s}, {}, {addr};", ring.slot_bytes()));
        self.line(&format!("mad.lo.u32 {addr}, {TID}, {}, {addr};", ring.width * bytes));
        for (round, (values, guard)) in rounds.iter().enumerate() {
            let offset = field * ring.field_bytes() + round as u32 * ring.threads * ring.width * bytes;
            self.write_elements("shared", &format!("{addr}+{offset}"), values, guard.as_deref());
        }
        if ring.side == 0 {
            return;
        }
        let side = ring.side as usize;
        self.comment(&format!("and each vector's first and last {side} in the slot's heads and tails"));
        let sides = self.t();
        self.line(&format!("mov.u32 {sides}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {sides}, {s}, {}, {sides};", ring.chunks() * ring.side * bytes));
        self.line(&format!("mad.lo.u32 {sides}, {TID}, {}, {sides};", ring.side * bytes));
        for (round, (values, guard)) in rounds.iter().enumerate() {
            let offset = field * ring.field_bytes() + round as u32 * ring.threads * ring.side * bytes;
            for (part, piece) in [(RingPart::Heads, &values[..side]), (RingPart::Tails, &values[values.len() - side..])]
            {
                let at = offset + ring.part_start(part, 0, 0) * bytes;
                self.write_elements("shared", &format!("{sides}+{at}"), piece, guard.as_deref());
            }
        }
    }

    /// Every lane reads its elements `at.element(lane)..` of box row `row` of input field
    /// `field` from the ring: row `warp * rows_per_warp + y` of the slot of box plane `z`.
    pub(super) fn read_ring(&mut self, dsts: &[Reg], first: u32, at: AffineLoad, field: u32, row: u32, part: RingPart) {
        let (ring, regs) = self.plane_ring();
        let bytes = self.program.element.bytes();
        let rows = self.program.pattern.box_rows().1;
        let (z, y) = (row / rows, row % rows);
        let values: Vec<String> = dsts.iter().map(|&r| self.reg(r)).collect();
        let of_field = self.of_field(field);
        let from = match part {
            RingPart::Row => "",
            RingPart::Heads => "'s heads",
            RingPart::Tails => "'s tails",
        };
        self.comment(&format!(
            "rc[{first}..{}] = tile elements {}.. + lane * {} of box row {y}, plane {z}{of_field}, from the ring{from}",
            first + values.len() as u32,
            at.base,
            at.stride
        ));
        if part != RingPart::Row {
            // Lane l's piece is in copy vector base / width + l * stride / width of the row.
            let start = match self.lane_starts.get(&(Buffer::RingSides, at.stride, z)) {
                Some(start) => start.clone(),
                None => {
                    let s = self.ring_slot(&regs.phase, z, ring.slots);
                    let start = self.t();
                    let per_row = ring.chunks_per_row() * ring.side * bytes;
                    self.line(&format!("mov.u32 {start}, {SHARED_TILE};"));
                    self.line(&format!("mad.lo.u32 {start}, {s}, {}, {start};", ring.rows * per_row));
                    self.line(&format!(
                        "mad.lo.u32 {start}, {}, {}, {start};",
                        regs.warp,
                        ring.rows_per_warp * per_row
                    ));
                    self.line(&format!(
                        "mad.lo.u32 {start}, {LANE}, {}, {start};",
                        at.stride / ring.width * ring.side * bytes
                    ));
                    self.lane_starts.insert((Buffer::RingSides, at.stride, z), start.clone());
                    start
                }
            };
            let offset =
                field * ring.field_bytes() + (ring.part_start(part, 0, y) + ring.part_offset(part, at.base)) * bytes;
            self.read_elements("shared", &values, &format!("{start}+{offset}"), Guard::All);
            return;
        }
        let start = match self.lane_starts.get(&(Buffer::Ring, at.stride, z)) {
            Some(start) => start.clone(),
            None => {
                let s = self.ring_slot(&regs.phase, z, ring.slots);
                let start = self.t();
                self.line(&format!("mov.u32 {start}, {SHARED_TILE};"));
                self.line(&format!("mad.lo.u32 {start}, {s}, {}, {start};", ring.slot_bytes()));
                self.line(&format!(
                    "mad.lo.u32 {start}, {}, {}, {start};",
                    regs.warp,
                    ring.rows_per_warp * ring.row_bytes()
                ));
                self.line(&format!("mad.lo.u32 {start}, {LANE}, {}, {start};", at.stride * bytes));
                self.lane_starts.insert((Buffer::Ring, at.stride, z), start.clone());
                start
            }
        };
        let offset = field * ring.field_bytes() + y * ring.row_bytes() + at.base * bytes;
        self.read_elements("shared", &values, &format!("{start}+{offset}"), Guard::All);
    }

    /// The ring's phase moves one slot on.
    pub(super) fn turn_ring(&mut self) {
        let (ring, regs) = self.plane_ring();
        let q = self.q();
        self.comment("the ring turns: the oldest plane's slot now holds the newest");
        self.line(&format!("add.u32 {}, {}, 1;", regs.phase, regs.phase));
        self.line(&format!("setp.eq.u32 {q}, {}, {};", regs.phase, ring.slots));
        self.line(&format!("@{q} mov.u32 {}, 0;", regs.phase));
    }
}
