//! Printing loads, stores and stages: addresses, lane guards and the boundary rule.

use super::rule::Last;
use super::types::{narrow, ptx_type};
use super::{Buffer, Printer, CTAID, LANE, N, N_MINUS_1, N_OUT, OUTPUT, SHARED_TILE, TID, TILE_START};
use crate::boundary::Boundary;
use crate::distribution::AffineLoad;
use crate::machine::WarpStage;
use crate::program::Reg;
use crate::stage;

/// Where a lane's vector lies along x under the boundary rule ([`Printer::rule_vector`]).
#[derive(Clone, Debug)]
pub(super) struct RuleVector {
    /// Bytes from the vector to the one the lane reads (s64): 0 inside the row; outside, under
    /// `clamp` to the row's first or last vector, under `wrap` to the one it wraps to.
    shift: String,
    /// Under `clamp`: whether it lies before the row's start, and past its end.
    sides: Option<(String, String)>,
    /// Under `zero` and `valid`: whether it lies inside the row.
    inside: Option<String>,
}

/// Which lanes of a load take part, and what the others' registers hold.
#[derive(Clone, Copy)]
pub(super) enum Guard<'a> {
    All,
    /// Lanes where the predicate holds load; the others' registers hold zero.
    Zeroed(&'a str),
    /// Lanes where the predicate holds load; nothing reads the others' registers.
    Only(&'a str),
}

impl Printer<'_> {
    /// `regs` = consecutive elements from `addr` in state space `space` (`global.nc`, `shared`),
    /// in one access. 16-bit elements are read as they are held, in pairs per 32-bit word, and
    /// split into their registers (widened to f32 for bf16).
    pub(super) fn read_elements(&mut self, space: &str, regs: &[String], addr: &str, guard: Guard) {
        let element = self.program.element;
        if element.half().is_none() {
            let ty = ptx_type(element);
            return self.access(&format!("ld.{space}.{ty}"), regs, addr, guard, element.register_bits());
        }
        let widened = element.widened();
        let raw: Vec<String> = match (regs.len(), widened) {
            (1, None) => regs.to_vec(),
            (1, Some(_)) => vec![self.h()],
            (n, _) => (0..n / 2).map(|_| self.t()).collect(),
        };
        let (ty, bits) = if regs.len() == 1 { ("b16", 16) } else { ("b32", 32) };
        self.access(&format!("ld.{space}.{ty}"), &raw, addr, guard, bits);
        match widened {
            Some(format) => {
                let halves = self.unpack(&raw, regs.len());
                for (d, h) in regs.iter().zip(&halves) {
                    self.widen(format, d, h);
                }
            }
            // Loaded into their registers already, or split out of the words.
            None if regs.len() == 1 => {}
            None => {
                for (word, pair) in raw.iter().zip(regs.chunks(2)) {
                    self.line(&format!("mov.b32 {{{}, {}}}, {word};", pair[0], pair[1]));
                }
            }
        }
    }

    /// Consecutive elements from `addr` in state space `space` = `values`, in one access;
    /// 16-bit elements packed in pairs (bf16 rounded back from f32 first, exactly: they hold
    /// values of the type).
    pub(super) fn write_elements(&mut self, space: &str, addr: &str, values: &[String], guard: Option<&str>) {
        let element = self.program.element;
        let guard = guard.map_or(Guard::All, Guard::Only);
        if element.half().is_none() {
            let ty = ptx_type(element);
            return self.access(&format!("st.{space}.{ty}"), values, addr, guard, 0);
        }
        let halves: Vec<String> = match element.widened() {
            Some(format) => values
                .iter()
                .map(|v| {
                    let h = self.h();
                    self.line(&narrow(format, &h, v));
                    h
                })
                .collect(),
            None => values.to_vec(),
        };
        let raw = match halves.len() {
            1 => halves,
            _ => halves
                .chunks(2)
                .map(|pair| {
                    let t = self.t();
                    self.line(&format!("mov.b32 {t}, {{{}, {}}};", pair[0], pair[1]));
                    t
                })
                .collect(),
        };
        let ty = if values.len() == 1 { "b16" } else { "b32" };
        self.access(&format!("st.{space}.{ty}"), &raw, addr, guard, 0);
    }

    /// The 16-bit halves of 32-bit words `raw` (low half first), or the one 16-bit `raw` itself.
    fn unpack(&mut self, raw: &[String], n: usize) -> Vec<String> {
        if n == 1 {
            return raw.to_vec();
        }
        let mut halves = Vec::with_capacity(n);
        for word in raw {
            let (lo, hi) = (self.h(), self.h());
            self.line(&format!("mov.b32 {{{lo}, {hi}}}, {word};"));
            halves.extend([lo, hi]);
        }
        halves
    }

    /// One load or store `instr` (`ld.global.nc.f32`) of `regs` at `addr`, vectorized for
    /// several, under `guard`; a load zeroes the registers of `bits` bits it may skip first.
    pub(super) fn access(&mut self, instr: &str, regs: &[String], addr: &str, guard: Guard, bits: u32) {
        let (prefix, vector) = match regs.len() {
            1 => (instr.to_string(), regs[0].clone()),
            n => {
                let (op, ty) = instr.rsplit_once('.').unwrap_or((instr, ""));
                (format!("{op}.v{n}.{ty}"), format!("{{{}}}", regs.join(", ")))
            }
        };
        let text = match instr.starts_with("st.") {
            true => format!("{prefix} [{addr}], {vector};"),
            false => format!("{prefix} {vector}, [{addr}];"),
        };
        match guard {
            Guard::All => self.line(&text),
            Guard::Zeroed(q) => {
                for r in regs {
                    self.line(&format!("mov.b{bits} {r}, 0;"));
                }
                self.line(&format!("@{q} {text}"));
            }
            Guard::Only(q) => self.line(&format!("@{q} {text}")),
        }
    }

    /// `base + lane * stride` as a 64-bit index relative to the tile, plus `TILE_START`.
    fn tile_index(&mut self, base: u32, stride: u32) -> String {
        let e = self.t();
        self.line(&format!("mad.lo.u32 {e}, {LANE}, {stride}, {base};"));
        let g = self.a();
        self.line(&format!("cvt.u64.u32 {g}, {e};"));
        self.line(&format!("add.u64 {g}, {g}, {TILE_START};"));
        g
    }

    pub(super) fn address(&mut self, base: &str, index: &str, bytes: u32) -> String {
        let addr = self.a();
        self.line(&format!("mad.lo.u64 {addr}, {index}, {bytes}, {base};"));
        addr
    }

    /// The address of tile element `lane * stride - lead` of row `row` (0 in 1D) in `buffer`
    /// (input or output), computed once per path: vector accesses add their constant offset in
    /// the instruction, as ptxas cannot fold per-access 32-bit index arithmetic into offsets
    /// itself. Rows after the first add their distance to the first row's start.
    pub(super) fn lane_start(&mut self, buffer: Buffer, stride: u32, lead: u32, row: u32) -> String {
        if let Some(start) = self.lane_starts.get(&(buffer, stride, row)) {
            return start.clone();
        }
        let start = if let Some(next) = self.next_row_start(buffer, stride, row) {
            next
        } else if row > 0 {
            let first = self.lane_start(buffer, stride, lead, 0);
            self.row_start(buffer, row, &first)
        } else {
            let g = self.tile_index(0, stride);
            if lead > 0 {
                self.line(&format!("sub.u64 {g}, {g}, {lead};"));
            }
            self.add_row0(buffer, &g);
            let base = match buffer {
                Buffer::Input(field) => self.input(field),
                Buffer::Output(field) => self.output(field),
                // Only global buffers have lane starts from here.
                Buffer::Stage | Buffer::Ring | Buffer::RingSides => OUTPUT.to_string(),
            };
            self.address(&base, &g, self.program.element.bytes())
        };
        self.lane_starts.insert((buffer, stride, row), start.clone());
        start
    }

    /// ` of input row R` (2D and 3D) ` of field F` (several fields), for a comment.
    fn of_row_and_field(&self, field: u32, row: u32) -> String {
        match self.grid {
            Some(_) => format!(" of input row {row}{}", self.of_field(field)),
            None => self.of_field(field),
        }
    }

    /// ` of field F` with several input fields, for a comment; nothing with one.
    pub(super) fn of_field(&self, field: u32) -> String {
        match self.program.fields {
            1 => String::new(),
            _ => format!(" of field {field}"),
        }
    }

    /// ` of output field F` with several output fields, for a comment; nothing with one.
    pub(super) fn of_output_field(&self, field: u32) -> String {
        match self.program.output_fields {
            1 => String::new(),
            _ => format!(" of output field {field}"),
        }
    }

    pub(super) fn load(
        &mut self,
        dst: Reg,
        cache: Option<u32>,
        at: AffineLoad,
        lanes: (u32, u32),
        field: u32,
        row: u32,
    ) {
        let d = self.reg(dst);
        let AffineLoad { base, stride } = at;
        let in_row = self.of_row_and_field(field, row);
        match cache {
            Some(k) => self.comment(&format!("rc[{k}] = tile element {base} + lane * {stride}{in_row}")),
            None => self.comment(&format!("tap: tile element {base} + lane * {stride}{in_row}, from global memory")),
        }
        let g = self.tile_index(base, stride);
        let lead = self.program.schedule.lead;
        if lead > 0 {
            self.line(&format!("sub.u64 {g}, {g}, {lead};"));
        }
        // Which lanes load at all: the others never read this register.
        let guard = self.lane_guard(lanes);
        self.read_global(&d, g, guard, field, row);
    }

    /// `d` = input element `g` (a 64-bit index along x, possibly outside the input) of input
    /// row `row` of the tile (0 in 1D) of input field `field` under the boundary rule in each
    /// dimension, or zero where `guard` is false.
    fn read_global(&mut self, d: &str, g: String, mut guard: Option<String>, field: u32, row: u32) {
        let program = self.program;
        let inside = self.rule_coordinate(&g, N, Last::In(N_MINUS_1), None);
        guard = self.both(guard, inside);
        if self.grid.is_some() {
            let (start, inside) = self.input_row_source(row);
            self.line(&format!("add.s64 {g}, {g}, {start};"));
            guard = self.both(guard, inside);
        }
        let addr = self.address(&self.input(field), &g, program.element.bytes());
        let guard = guard.as_deref().map_or(Guard::All, Guard::Zeroed);
        self.read_elements("global.nc", &[d.to_string()], &addr, guard);
    }

    pub(super) fn load_vector(
        &mut self,
        dsts: &[Reg],
        first: u32,
        at: AffineLoad,
        lanes: (u32, u32),
        field: u32,
        row: u32,
    ) {
        let (bytes, lead) = (self.program.element.bytes(), self.program.schedule.lead);
        let regs: Vec<String> = dsts.iter().map(|&r| self.reg(r)).collect();
        let in_row = self.of_row_and_field(field, row);
        self.comment(&format!(
            "rc[{first}..{}] = tile elements {}.. + lane * {}{in_row}",
            first + regs.len() as u32,
            at.base,
            at.stride
        ));
        let start = self.lane_start(Buffer::Input(field), at.stride, lead, row);
        let addr = format!("{start}+{}", at.base * bytes);
        let guard = self.lane_guard(lanes);
        self.read_elements("global.nc", &regs, &addr, guard.as_deref().map_or(Guard::All, Guard::Zeroed));
    }

    /// [`crate::machine::Op::LoadVectorRule`]: the lane's vector of input row `row` (inside the
    /// grid) where the interior path reads it, moved along x to where the rule says
    /// ([`Printer::rule_vector`], once per path), then under `clamp` each element of a vector
    /// outside the row takes the edge element.
    pub(super) fn load_vector_rule(
        &mut self,
        dsts: &[Reg],
        first: u32,
        at: AffineLoad,
        lanes: (u32, u32),
        field: u32,
        row: u32,
    ) {
        let (bytes, lead) = (self.program.element.bytes(), self.program.schedule.lead);
        let regs: Vec<String> = dsts.iter().map(|&r| self.reg(r)).collect();
        let in_row = self.of_row_and_field(field, row);
        let x = self.rule_vector(at, regs.len() as u32);
        let what = format!(
            "rc[{first}..{}] = tile elements {}.. + lane * {}{in_row}",
            first + regs.len() as u32,
            at.base,
            at.stride
        );
        self.comment(&format!("{what}, one vector under the rule along x"));
        let start = self.lane_start(Buffer::Input(field), at.stride, lead, row);
        let addr = self.a();
        self.line(&format!("add.s64 {addr}, {start}, {};", x.shift));
        let lanes_guard = self.lane_guard(lanes);
        let guard = self.both(lanes_guard, x.inside.clone());
        let addr = format!("{addr}+{}", at.base * bytes);
        self.read_elements("global.nc", &regs, &addr, guard.as_deref().map_or(Guard::All, Guard::Zeroed));
        if let Some((before, after)) = &x.sides {
            let bits = self.program.element.register_bits();
            let last = regs.len() - 1;
            for r in &regs[1..] {
                self.line(&format!("@{before} mov.b{bits} {r}, {};", regs[0]));
            }
            for r in &regs[..last] {
                self.line(&format!("@{after} mov.b{bits} {r}, {};", regs[last]));
            }
        }
    }

    /// Where a lane's vector of `width` tile elements `base + lane * stride..` lies along x under
    /// the boundary rule, once per path and width (the same in every row). Rows are whole vectors and the
    /// vector starts at a multiple of its width, so it lies wholly inside the row or wholly
    /// outside it: inside, it is read where it is; outside, under `clamp` the row's first or
    /// last vector is read instead (and its edge element spread), under `wrap` the vector it
    /// wraps to, under `zero` and `valid` nothing.
    fn rule_vector(&mut self, at: AffineLoad, width: u32) -> RuleVector {
        // Keyed by the width too: a run of one element at a vector's start is clamped to the
        // row's last element, the vector to the row's last vector (a granule's rows load both).
        if let Some(found) = self.rule_vectors.get(&(at.base, at.stride, width)) {
            return found.clone();
        }
        let (lead, bytes) = (self.program.schedule.lead, self.program.element.bytes());
        self.comment(&format!("where the lane's {width}-element run of tile elements {}.. + lane * {} lies along x under the rule, in every row", at.base, at.stride));
        let g = self.tile_index(at.base, at.stride);
        if lead > 0 {
            self.line(&format!("sub.u64 {g}, {g}, {lead};"));
        }
        // Where it is read: `to`, some elements from `g`, under the rule along x with the row's
        // last vector as its last place.
        let to = self.a();
        self.line(&format!("mov.s64 {to}, {g};"));
        let sides = match self.program.pattern.boundary() {
            Boundary::Clamp => {
                let (before, after) = (self.q(), self.q());
                self.line(&format!("setp.lt.s64 {before}, {g}, 0;"));
                self.line(&format!("setp.ge.s64 {after}, {g}, {N};"));
                Some((before, after))
            }
            _ => None,
        };
        let inside = self.rule_coordinate(&to, N, Last::Less(width), None);
        let shift = self.a();
        self.line(&format!("sub.s64 {shift}, {to}, {g};"));
        self.line(&format!("mul.lo.s64 {shift}, {shift}, {bytes};"));
        let found = RuleVector { shift, sides, inside };
        self.rule_vectors.insert((at.base, at.stride, width), found.clone());
        found
    }

    pub(super) fn read_stage(&mut self, dsts: &[Reg], first: u32, at: AffineLoad, field: u32) {
        let bytes = self.program.element.bytes();
        // The machine program reads a stage only after staging it.
        let Some(stage) = self.stage else { return };
        let regs: Vec<String> = dsts.iter().map(|&r| self.reg(r)).collect();
        let of_field = self.of_field(field);
        self.comment(&format!(
            "rc[{first}..{}] = tile elements {}.. + lane * {}{of_field}, from the stage",
            first + regs.len() as u32,
            at.base,
            at.stride
        ));
        let start = self.stage_lane_start(&stage);
        // The fields' stages follow each other in shared memory.
        let field_bytes = stage.region_bytes * self.program.pattern.tiles_per_block();
        let offset = field * field_bytes + stage.read_position(0, at.base) * bytes;
        self.read_elements("shared", &regs, &format!("{start}+{offset}"), Guard::All);
    }

    /// The shared-memory address of this lane's granule in its warp's region,
    /// `read_position(lane, 0)`, computed once per path.
    fn stage_lane_start(&mut self, stage: &WarpStage) -> String {
        let padding = stage.padding;
        if let Some(start) = self.lane_starts.get(&(Buffer::Stage, padding.granule, 0)) {
            return start.clone();
        }
        let pattern = self.program.pattern;
        let bytes = self.program.element.bytes();
        let start = self.t();
        self.line(&format!("shr.u32 {start}, {TID}, {};", pattern.warp().trailing_zeros()));
        let base = self.t();
        self.line(&format!("mov.u32 {base}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {start}, {start}, {}, {base};", stage.region_bytes));
        self.line(&format!("mad.lo.u32 {start}, {LANE}, {}, {start};", stage.read_position(1, 0) * bytes));
        self.lane_starts.insert((Buffer::Stage, padding.granule, 0), start.clone());
        start
    }

    /// Strategy shared_memory: thread t copies block elements t, t + T, ... (T threads per
    /// block) from input index `block * block_outputs - lead` on into the staged tile, then the
    /// block waits for all of them.
    pub(super) fn stage_block(&mut self, lead: u32, elements: u32, field: u32) {
        self.block_stage = Some(elements);
        let program = self.program;
        let pattern = program.pattern;
        let (threads, bytes) = (pattern.threads_per_block(), program.element.bytes());
        let rows = pattern.step().input_rows();
        let of_field = self.of_field(field);
        match rows {
            1 => self.comment(&format!("stage the block's {elements} input elements{of_field} in shared memory")),
            _ => self.comment(&format!(
                "stage the block's {rows} input rows of {elements} elements{of_field} in shared memory"
            )),
        }
        // The fields' stages follow each other in shared memory.
        let field_offset = field * stage::block_stage_bytes(&pattern, program.element, elements);
        // A streaming tile restages every step: no lane may overwrite what another still reads.
        if pattern.streams() {
            self.line("bar.warp.sync -1;");
        }
        // In 2D/3D each warp stages its own tile's box into its own region: the lanes copy.
        let first = self.a();
        let (tile, copier, threads) = match self.grid {
            Some(_) => {
                self.line(&format!("mov.u64 {first}, {TILE_START};"));
                let (tile, w) = (self.t(), self.t());
                self.line(&format!("mov.u32 {tile}, {SHARED_TILE};"));
                self.line(&format!("shr.u32 {w}, {TID}, {};", pattern.warp().trailing_zeros()));
                self.line(&format!("mad.lo.u32 {tile}, {w}, {}, {tile};", rows * elements * bytes));
                (tile, LANE, pattern.warp())
            }
            None => {
                self.line(&format!("mul.wide.u32 {first}, {CTAID}, {};", pattern.block_outputs()));
                let tile = self.t();
                self.line(&format!("mov.u32 {tile}, {SHARED_TILE};"));
                (tile, TID, threads)
            }
        };
        for row in 0..rows {
            for round in 0..elements.div_ceil(threads) {
                let j = self.t();
                self.line(&format!("add.u32 {j}, {copier}, {};", round * threads));
                let guard = ((round + 1) * threads > elements).then(|| {
                    let q = self.q();
                    self.line(&format!("setp.lt.u32 {q}, {j}, {elements};"));
                    q
                });
                let g = self.a();
                self.line(&format!("cvt.u64.u32 {g}, {j};"));
                self.line(&format!("add.u64 {g}, {g}, {first};"));
                if lead > 0 {
                    self.line(&format!("sub.u64 {g}, {g}, {lead};"));
                }
                let value = self.scratch(program.element);
                self.read_global(&value, g, guard.clone(), field, row);
                let addr = self.t();
                self.line(&format!("mad.lo.u32 {addr}, {j}, {bytes}, {tile};"));
                let offset = match field_offset + row * elements * bytes {
                    0 => String::new(),
                    offset => format!("+{offset}"),
                };
                self.write_elements("shared", &format!("{addr}{offset}"), &[value], guard.as_deref());
            }
        }
        match self.grid {
            Some(_) => self.line("bar.warp.sync -1;"),
            None => self.line("bar.sync 0;"),
        }
    }

    /// Staged windows: the warp copies its input elements from its tile's element 0 on into
    /// its own region of shared memory, at the padded positions of the stage, then syncs its
    /// lanes. Lane l copies vectors l, l + W, ...: with 16-byte vectors a warp's copy is 512
    /// contiguous bytes, every byte once. Each warp stages its own halo, so no block-wide
    /// barrier holds warps back. The warp's first and last tiles copy element by element under
    /// the boundary rule.
    pub(super) fn stage_warp(&mut self, stage: &WarpStage, field: u32) {
        self.stage = Some(*stage);
        let program = self.program;
        let pattern = program.pattern;
        let WarpStage { lead, elements, padding, chunks, region_bytes: region } = *stage;
        let (warp, bytes, width) = (pattern.warp(), program.element.bytes(), padding.width);
        let of_field = self.of_field(field);
        self.comment(&format!(
            "stage the warp's {elements} input elements{of_field} in its region of shared memory ({region} bytes)"
        ));
        let origin = self.a();
        self.line(&format!("sub.s64 {origin}, {TILE_START}, {lead};"));
        // The lane's first vector: input element origin + lane * width, stage position
        // position(lane * width) in the warp's region.
        let region_start = self.t();
        self.line(&format!("shr.u32 {region_start}, {TID}, {};", warp.trailing_zeros()));
        let base = self.t();
        self.line(&format!("mov.u32 {base}, {SHARED_TILE};"));
        if field > 0 {
            // The fields' stages follow each other in shared memory.
            self.line(&format!("add.u32 {base}, {base}, {};", field * region * pattern.tiles_per_block()));
        }
        self.line(&format!("mad.lo.u32 {region_start}, {region_start}, {region}, {base};"));
        let rounds = stage.rounds(warp);
        // Every round's position is the first's plus a constant when a round spans whole granules.
        let incremental = (warp * width) % padding.granule == 0;
        let position = |p: &mut Self, round: u32| -> String {
            let j = p.t();
            p.line(&format!("mad.lo.u32 {j}, {LANE}, {width}, {};", round * warp * width));
            if padding.pad > 0 {
                let before = p.t();
                p.line(&format!("shr.u32 {before}, {j}, {};", padding.granule.trailing_zeros()));
                p.line(&format!("mad.lo.u32 {j}, {before}, {}, {j};", padding.pad));
            }
            let addr = p.t();
            p.line(&format!("mad.lo.u32 {addr}, {j}, {bytes}, {region_start};"));
            addr
        };
        let guard_of = |p: &mut Self, round: u32| -> Option<String> {
            ((round + 1) * warp > chunks).then(|| {
                let q = p.q();
                p.line(&format!("setp.lt.u32 {q}, {LANE}, {};", chunks - round * warp));
                q
            })
        };
        let store = |p: &mut Self, addr: &str, offset: u32, values: &[String], guard: &Option<String>| {
            p.write_elements("shared", &format!("{addr}+{offset}"), values, guard.as_deref());
        };
        let (vectors, staged) = (self.label("stage_vectors"), self.label("staged"));
        let (end, inside) = (self.a(), self.q());
        self.line(&format!("add.s64 {end}, {origin}, {};", chunks * width));
        self.line(&format!("setp.ge.s64 {inside}, {origin}, 0;"));
        self.line(&format!("setp.le.and.s64 {inside}, {end}, {N}, {inside};"));
        self.line(&format!("@{inside} bra {vectors};"));
        for round in 0..rounds {
            let guard = guard_of(self, round);
            let first = self.a();
            self.line(&format!("mul.wide.u32 {first}, {LANE}, {width};"));
            self.line(&format!("add.s64 {first}, {first}, {};", round * warp * width));
            self.line(&format!("add.s64 {first}, {first}, {origin};"));
            let values: Vec<String> = (0..width).map(|_| self.scratch(program.element)).collect();
            for (k, value) in values.iter().enumerate() {
                let g = self.a();
                self.line(&format!("add.s64 {g}, {first}, {k};"));
                self.read_global(value, g, guard.clone(), field, 0);
            }
            let addr = position(self, round);
            store(self, &addr, 0, &values, &guard);
        }
        self.line(&format!("bra {staged};"));
        self.label_line(&vectors);
        let g = self.a();
        self.line(&format!("mul.wide.u32 {g}, {LANE}, {width};"));
        self.line(&format!("add.s64 {g}, {g}, {origin};"));
        let source = self.address(&self.input(field), &g, bytes);
        let first_position = if incremental { Some(position(self, 0)) } else { None };
        for round in 0..rounds {
            let guard = guard_of(self, round);
            let values: Vec<String> = (0..width).map(|_| self.scratch(program.element)).collect();
            let offset = round * warp * width * bytes;
            self.read_elements(
                "global.nc",
                &values,
                &format!("{source}+{offset}"),
                guard.as_deref().map_or(Guard::All, Guard::Only),
            );
            match &first_position {
                Some(addr) => {
                    let stride = padding.position(warp * width) * bytes;
                    store(self, addr, round * stride, &values, &guard);
                }
                None => {
                    let addr = position(self, round);
                    store(self, &addr, 0, &values, &guard);
                }
            }
        }
        self.label_line(&staged);
        self.line("bar.warp.sync -1;");
    }

    /// Strategy shared_memory: this warp's tile element `base + lane * stride` from the stage.
    pub(super) fn shared(&mut self, dst: Reg, at: AffineLoad, field: u32, row: u32) {
        let program = self.program;
        let pattern = program.pattern;
        let bytes = program.element.bytes();
        let d = self.reg(dst);
        let AffineLoad { base, stride } = at;
        let of_field = self.of_field(field);
        self.comment(&format!("tap: tile element {base} + lane * {stride}{of_field}, from shared memory"));
        // Input rows follow each other in the stage.
        let base = base + row * self.block_stage.unwrap_or(0);
        // Element of the block's stage: (warp in block) * tile_outputs + base + lane * stride,
        // in 2D/3D (warp in block) * its region's elements.
        let region = match self.grid {
            Some(_) => pattern.step().input_rows() * self.block_stage.unwrap_or(0),
            None => pattern.tile_outputs(),
        };
        let e = self.t();
        self.line(&format!("shr.u32 {e}, {TID}, {};", pattern.warp().trailing_zeros()));
        self.line(&format!("mul.lo.u32 {e}, {e}, {region};"));
        self.line(&format!("add.u32 {e}, {e}, {base};"));
        self.line(&format!("mad.lo.u32 {e}, {LANE}, {stride}, {e};"));
        let addr = self.t();
        self.line(&format!("mov.u32 {addr}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {addr}, {e}, {bytes}, {addr};"));
        // The fields' stages follow each other in shared memory.
        let offset = match field * stage::block_stage_bytes(&pattern, program.element, self.block_stage.unwrap_or(0)) {
            0 => String::new(),
            offset => format!("+{offset}"),
        };
        self.read_elements("shared", &[d], &format!("{addr}{offset}"), Guard::All);
    }

    pub(super) fn store(&mut self, src: Reg, field: u32, output: u32, at: AffineLoad, row: u32) {
        let of_field = self.of_output_field(field);
        match self.grid {
            Some(_) => self.comment(&format!(
                "store output {output} of output row {row}{of_field}: tile output {} + lane * {}",
                at.base, at.stride
            )),
            None => self
                .comment(&format!("store output {output}{of_field}: tile output {} + lane * {}", at.base, at.stride)),
        }
        let i = self.tile_index(at.base, at.stride);
        let q = self.q();
        self.line(&format!("setp.lt.u64 {q}, {i}, {N_OUT};"));
        if self.grid.is_some() {
            let (start, exists) = self.output_row_source(row);
            self.line(&format!("and.pred {q}, {q}, {exists};"));
            self.line(&format!("add.u64 {i}, {i}, {start};"));
        }
        let bytes = self.program.element.bytes();
        let addr = self.address(&self.output(field), &i, bytes);
        self.write_elements("global", &addr, &[self.reg(src)], Some(&q));
    }

    pub(super) fn store_vector(&mut self, srcs: &[Reg], field: u32, output: u32, at: AffineLoad, row: u32) {
        let bytes = self.program.element.bytes();
        let regs: Vec<String> = srcs.iter().map(|&src| self.reg(src)).collect();
        let of_row = match self.grid {
            Some(_) => format!(" of output row {row}"),
            None => String::new(),
        };
        let of_field = self.of_output_field(field);
        self.comment(&format!(
            "store outputs {output}..{}{of_row}{of_field}: tile output {}.. + lane * {}",
            output + regs.len() as u32,
            at.base,
            at.stride
        ));
        let start = self.lane_start(Buffer::Output(field), at.stride, 0, row);
        let addr = format!("{start}+{}", at.base * bytes);
        self.write_elements("global", &addr, &regs, None);
    }
}
