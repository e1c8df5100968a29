//! Printing staged planes ([`crate::ring`]): the block's plane fetches into registers, their
//! puts into ring slots, the block barriers, the lanes' window reads and the ring's phase.

use super::grid::{FetchVector, RingRegs};
use super::memory::Guard;
use super::{Buffer, Printer, LANE, N, N_MINUS_1, SHARED_TILE, TID};
use crate::distribution::AffineLoad;
use crate::pattern::Boundary;
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

    /// Coordinate `c` (s64, possibly outside `0..n`) under the boundary rule, in place; the
    /// predicate that it is inside under `valid` and `zero` (else `None`).
    fn rule_coordinate(&mut self, c: &str, n: &str, last: &str) -> Option<String> {
        match self.program.pattern.boundary() {
            Boundary::Valid | Boundary::Zero => {
                let q = self.q();
                self.line(&format!("setp.lt.u64 {q}, {c}, {n};"));
                Some(q)
            }
            Boundary::Clamp => {
                self.line(&format!("max.s64 {c}, {c}, 0;"));
                self.line(&format!("min.s64 {c}, {c}, {last};"));
                None
            }
            Boundary::Wrap => {
                let q = self.q();
                self.line(&format!("rem.s64 {c}, {c}, {n};"));
                self.line(&format!("setp.lt.s64 {q}, {c}, 0;"));
                self.line(&format!("@{q} add.s64 {c}, {c}, {n};"));
                None
            }
        }
    }

    /// `a and b` of optional predicates.
    fn both(&mut self, a: Option<String>, b: Option<String>) -> Option<String> {
        match (a, b) {
            (Some(a), Some(b)) => {
                let q = self.q();
                self.line(&format!("and.pred {q}, {a}, {b};"));
                Some(q)
            }
            (a, b) => a.or(b),
        }
    }

    /// Where thread t's copy vectors t, t + T, ... of every plane lie (input rows from
    /// `first_row`, elements from `first_x`): once, before the plane loop, as the division by
    /// the vectors per row is the same at every plane.
    pub(super) fn fetch_vectors(&mut self, first_row: &str, first_x: &str) -> Vec<FetchVector> {
        let ring = self.program.ring.expect("a kernel of staged planes");
        let (cpr, width) = (ring.chunks_per_row(), ring.width);
        self.comment(&format!("the ring's copy: thread t copies vectors t, t + {} ... of each plane's {} rows of {cpr}", ring.threads, ring.rows));
        (0..ring.rounds())
            .map(|round| {
                let c = self.t();
                self.line(&format!("add.u32 {c}, {TID}, {};", round * ring.threads));
                let guard = ((round + 1) * ring.threads > ring.chunks()).then(|| {
                    let q = self.q();
                    self.line(&format!("setp.lt.u32 {q}, {c}, {};", ring.chunks()));
                    q
                });
                let (row, col) = (self.t(), self.t());
                self.line(&format!("div.u32 {row}, {c}, {cpr};"));
                self.line(&format!("mul.lo.u32 {col}, {row}, {cpr};"));
                self.line(&format!("sub.u32 {col}, {c}, {col};"));
                let (y, x) = (self.a(), self.a());
                self.line(&format!("cvt.u64.u32 {y}, {row};"));
                self.line(&format!("add.s64 {y}, {y}, {first_row};"));
                self.line(&format!("mul.wide.u32 {x}, {col}, {width};"));
                self.line(&format!("add.s64 {x}, {x}, {first_x};"));
                FetchVector { y, x, guard }
            })
            .collect()
    }

    /// Thread t reads copy vectors t, t + T, ... of box plane `plane` of input field `field`
    /// into registers: 16-byte loads where the block's whole plane lies inside the input, else
    /// element by element under the boundary rule in each dimension.
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
        // Each round's vector (where it lies: the prologue's), and the registers it comes in.
        let rounds: Vec<(Vec<String>, Option<String>, String, String)> = regs
            .vectors
            .iter()
            .map(|v| ((0..width).map(|_| self.scratch(element)).collect(), v.guard.clone(), v.y.clone(), v.x.clone()))
            .collect();
        let x0 = regs.first_x.clone();
        // The whole plane inside the input, rows whole vectors long: no rule applies.
        let inside = self.q();
        let bound = |p: &mut Self, start: &str, len: u32, n: &str, first: bool| {
            let hi = p.a();
            p.line(&format!("add.s64 {hi}, {start}, {len};"));
            match first {
                true => p.line(&format!("setp.ge.s64 {inside}, {start}, 0;")),
                false => p.line(&format!("setp.ge.and.s64 {inside}, {start}, 0, {inside};")),
            }
            p.line(&format!("setp.le.and.s64 {inside}, {hi}, {n}, {inside};"));
        };
        bound(self, &x0, ring.row_elements, N, true);
        bound(self, &regs.first_row, ring.rows, &grid.in_y, false);
        bound(self, &z, 1, &in_z, false);
        if let Some(aligned) = &grid.in_aligned {
            self.line(&format!("and.pred {inside}, {inside}, {aligned};"));
        }
        let (vectors, fetched) = (self.label("plane_vectors"), self.label("plane_fetched"));
        self.line(&format!("@{inside} bra {vectors};"));
        let (last_y, last_z) = (self.a(), self.a());
        self.line(&format!("sub.s64 {last_y}, {}, 1;", grid.in_y));
        self.line(&format!("sub.s64 {last_z}, {in_z}, 1;"));
        let zz = self.a();
        self.line(&format!("mov.s64 {zz}, {z};"));
        let z_inside = self.rule_coordinate(&zz, &in_z, &last_z);
        if let Some(aligned) = &grid.in_aligned {
            let elements = self.label("plane_elements");
            self.line(&format!("@!{aligned} bra {elements};"));
            self.fetch_edge_vectors(field, &rounds, &zz, z_inside.clone(), &last_y);
            self.line(&format!("bra {fetched};"));
            self.label_line(&elements);
        }
        self.comment("element by element under the boundary rule");
        for (values, guard, y, x) in &rounds {
            let yy = self.a();
            self.line(&format!("mov.s64 {yy}, {y};"));
            let y_inside = self.rule_coordinate(&yy, &grid.in_y, &last_y);
            let row = self.a();
            self.line(&format!("mad.lo.s64 {row}, {zz}, {}, {yy};", grid.in_y));
            self.line(&format!("mul.lo.s64 {row}, {row}, {N};"));
            let row_guard = self.both(z_inside.clone(), y_inside);
            let row_guard = self.both(row_guard, guard.clone());
            for (k, value) in values.iter().enumerate() {
                let g = self.a();
                self.line(&format!("add.s64 {g}, {x}, {k};"));
                let x_inside = self.rule_coordinate(&g, N, N_MINUS_1);
                let guard = self.both(row_guard.clone(), x_inside);
                self.line(&format!("add.s64 {g}, {g}, {row};"));
                let addr = self.address(&self.input(field), &g, bytes);
                let zeroed = guard.as_deref().map_or(Guard::All, Guard::Zeroed);
                self.read_elements("global.nc", std::slice::from_ref(value), &addr, zeroed);
            }
        }
        self.line(&format!("bra {fetched};"));
        self.label_line(&vectors);
        for (values, guard, y, x) in &rounds {
            let index = self.a();
            self.line(&format!("mad.lo.s64 {index}, {z}, {}, {y};", grid.in_y));
            self.line(&format!("mad.lo.s64 {index}, {index}, {N}, {x};"));
            let addr = self.address(&self.input(field), &index, bytes);
            let only = guard.as_deref().map_or(Guard::All, Guard::Only);
            self.read_elements("global.nc", values, &addr, only);
        }
        self.label_line(&fetched);
        self.ring_fetched.insert(field, rounds.into_iter().map(|(values, guard, ..)| (values, guard)).collect());
    }

    /// A plane's copy vectors where the block's plane reaches past the input but rows are whole
    /// vectors long (so each vector lies wholly inside or wholly outside along x): each inside
    /// vector in one load from its row under the rule along y and z; along x, one outside
    /// vector is its row's edge element four times under `clamp`, its wrapped vector under
    /// `wrap`, zeros under `valid` and `zero`. `zz` is the plane's z under the rule.
    fn fetch_edge_vectors(&mut self, field: u32, rounds: &[(Vec<String>, Option<String>, String, String)], zz: &str, z_inside: Option<String>, last_y: &str) {
        let grid = self.grid.clone().expect("3D");
        let boundary = self.program.pattern.boundary();
        let (bytes, bits) = (self.program.element.bytes(), self.program.element.register_bits());
        self.comment("the plane reaches past the input: vector by vector under the boundary rule");
        for (values, guard, y, x) in rounds {
            let yy = self.a();
            self.line(&format!("mov.s64 {yy}, {y};"));
            let y_inside = self.rule_coordinate(&yy, &grid.in_y, last_y);
            let xx = self.a();
            self.line(&format!("mov.s64 {xx}, {x};"));
            // Inside along x: as unsigned, a negative x lies past N too.
            let x_inside = self.q();
            self.line(&format!("setp.lt.u64 {x_inside}, {xx}, {N};"));
            let outside_x = match boundary {
                Boundary::Clamp => {
                    let q = self.q();
                    self.line(&format!("setp.ge.u64 {q}, {xx}, {N};"));
                    self.rule_coordinate(&xx, N, N_MINUS_1);
                    Some(q)
                }
                Boundary::Wrap => {
                    self.rule_coordinate(&xx, N, N_MINUS_1);
                    None
                }
                Boundary::Valid | Boundary::Zero => None,
            };
            let index = self.a();
            self.line(&format!("mad.lo.s64 {index}, {zz}, {}, {yy};", grid.in_y));
            self.line(&format!("mad.lo.s64 {index}, {index}, {N}, {xx};"));
            let addr = self.address(&self.input(field), &index, bytes);
            match outside_x {
                Some(outside) => {
                    let vector = self.both(Some(x_inside), guard.clone());
                    let edge = self.both(Some(outside), guard.clone());
                    let edge = edge.as_deref().map_or(Guard::All, Guard::Only);
                    self.read_elements("global.nc", std::slice::from_ref(&values[0]), &addr, edge);
                    for value in &values[1..] {
                        let text = format!("mov.b{bits} {value}, {};", values[0]);
                        match edge {
                            Guard::Only(q) => self.line(&format!("@{q} {text}")),
                            _ => self.line(&text),
                        }
                    }
                    let vector = vector.as_deref().map_or(Guard::All, Guard::Only);
                    self.read_elements("global.nc", values, &addr, vector);
                }
                None if boundary == Boundary::Wrap => {
                    let only = guard.as_deref().map_or(Guard::All, Guard::Only);
                    self.read_elements("global.nc", values, &addr, only);
                }
                None => {
                    let zy = self.both(z_inside.clone(), y_inside);
                    let live = self.both(zy, Some(x_inside.clone())).unwrap_or(x_inside);
                    self.read_elements("global.nc", values, &addr, Guard::Zeroed(&live));
                }
            }
        }
    }

    /// Thread t writes what it fetched of input field `field` into ring slot
    /// `(phase + slot) mod slots`: copy vector c at plane position `c * width`.
    pub(super) fn put_plane(&mut self, slot: u32, field: u32) {
        let (ring, regs) = self.plane_ring();
        let Some(rounds) = self.ring_fetched.remove(&field) else { return };
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
            for (part, piece) in [(RingPart::Heads, &values[..side]), (RingPart::Tails, &values[values.len() - side..])] {
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
                    self.line(&format!("mad.lo.u32 {start}, {}, {}, {start};", regs.warp, ring.rows_per_warp * per_row));
                    self.line(&format!("mad.lo.u32 {start}, {LANE}, {}, {start};", at.stride / ring.width * ring.side * bytes));
                    self.lane_starts.insert((Buffer::RingSides, at.stride, z), start.clone());
                    start
                }
            };
            let offset = field * ring.field_bytes() + (ring.part_start(part, 0, y) + ring.part_offset(part, at.base)) * bytes;
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
                self.line(&format!("mad.lo.u32 {start}, {}, {}, {start};", regs.warp, ring.rows_per_warp * ring.row_bytes()));
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
