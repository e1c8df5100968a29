//! The launch map ([`rc_core::launch_map`]): its index programs are well formed for every tile
//! order, they place every tile of a launch on exactly one warp, and the index program's
//! arithmetic is PTX's.

use rc_core::launch_map::{LaunchMap, TileOrder};
use rc_core::machine::index::{
    Arith, Compare, DivideScratch, Given, IndexInputs, IndexKind, IndexOp, IndexProgram, IndexProgramError, IndexRegs,
    Operand, Special,
};
use rc_core::machine::Kernel;
use rc_core::{Boundary, Extent, OutputRows, Pattern, Radius};

/// A map of each order, and the output shape to place it over.
fn maps() -> Vec<(LaunchMap, Extent)> {
    let star = Pattern::grid(Radius::yx(1, 1), 32, 4, 3, 1, Boundary::Clamp).expect("valid");
    let star3 = Pattern::grid(Radius::zyx(1, 1, 1), 32, 2, 3, 5, Boundary::Zero).expect("valid");
    let line = Pattern::new(3, 32, 4, Boundary::Wrap).expect("valid");
    vec![
        (LaunchMap::new(line, false), Extent::x(10_000)),
        (LaunchMap::new(star, false), Extent::yx(41, 1000)),
        (LaunchMap::new(star, true), Extent::yx(41, 1000)),
        (LaunchMap::new(star3, false), Extent::zyx(12, 41, 300)),
        (LaunchMap::new(star3, true), Extent::zyx(12, 41, 300)),
    ]
}

#[test]
fn every_orders_index_program_writes_each_register_before_reading_it() {
    for (map, _) in maps() {
        let placement = map.placement(&mut IndexRegs::default(), None);
        placement.program.verify().unwrap_or_else(|e| panic!("{:?}: {e}", map.order));
        assert!(placement.start[0].is_some(), "{:?}", map.order);
        assert_eq!(placement.warp_in_block.is_some(), map.stacks_warps(), "{:?}", map.order);
    }
}

#[test]
fn every_launch_places_each_tile_on_one_warp() {
    for (map, output) in maps() {
        let all = OutputRows::all(output);
        let launch = map.launch_shape(Kernel::Whole, output, output, all).expect("fits").expect("a launch");
        let tile: Vec<u64> = map.pattern.tile().components().into_iter().rev().map(|t| t as u64).collect();
        let lens: Vec<u64> = output.components().into_iter().rev().map(|n| n as u64).collect();
        let mut placed = std::collections::HashSet::new();
        for warp in map.warps(launch, output, output, all) {
            if warp.start.iter().zip(&lens).any(|(&s, &n)| s >= n) {
                continue;
            }
            let at: Vec<u64> = warp.start.iter().zip(&tile).map(|(&s, &t)| s / t).collect();
            assert!(placed.insert(at), "{:?}: {warp:?} repeats a tile", map.order);
        }
        let tiles: usize = map.pattern.tiles_along(output).components().iter().product();
        assert_eq!(placed.len(), tiles, "{:?}", map.order);
        // Over rows 3..end - 2 of the outermost axis: the launched rows' tiles, from row 3 on.
        // A 1D output has no rows.
        if map.pattern.dims() == rc_core::Dims::One {
            assert!(OutputRows::of(output, 3, all.end - 2).is_err());
        } else {
            let outer = lens.len() - 1;
            let rows = OutputRows::of(output, 3, all.end - 2).expect("rows of the output");
            let launch = map.launch_shape(Kernel::Whole, output, output, rows).expect("fits").expect("a launch");
            let mut ends = lens.clone();
            ends[outer] = rows.end as u64;
            let mut placed = std::collections::HashSet::new();
            for warp in map.warps(launch, output, output, rows) {
                if warp.start.iter().zip(&ends).any(|(&s, &n)| s >= n) {
                    continue;
                }
                assert!(warp.start[outer] >= 3, "{:?}: {warp:?} starts before the first row", map.order);
                let mut at: Vec<u64> = warp.start.iter().zip(&tile).map(|(&s, &t)| s / t).collect();
                at[outer] = (warp.start[outer] - 3) / tile[outer];
                assert_eq!((warp.start[outer] - 3) % tile[outer], 0, "{:?}: {warp:?}", map.order);
                assert!(placed.insert(at), "{:?}: {warp:?} repeats a tile", map.order);
            }
            let tiles: usize = map.pattern.tiles_along(rows.launched(output)).components().iter().product();
            assert_eq!(placed.len(), tiles, "{:?} over rows {rows:?}", map.order);
        }
        let expected = match (map.stacks_warps(), map.pattern.dims()) {
            (true, rc_core::Dims::Two) => TileOrder::Bands,
            (true, _) => TileOrder::StackedBlocks,
            _ => TileOrder::RowMajor,
        };
        assert_eq!(map.order, expected);
    }
}

#[test]
fn the_verifier_refuses_a_read_before_a_write_and_a_register_of_the_wrong_kind() {
    let mut regs = IndexRegs::default();
    let (a, b, p) = (regs.u64(), regs.u64(), regs.pred());
    let reads_first =
        IndexProgram { ops: vec![IndexOp::Arith { op: Arith::Add, dst: a, a: b.into(), b: Operand::Imm(1) }] };
    assert_eq!(reads_first.verify(), Err(IndexProgramError::ReadBeforeWrite { op: 0, reg: b }));
    let wrong_kind = IndexProgram { ops: vec![IndexOp::Move { dst: p, a: Operand::Imm(1) }] };
    assert!(matches!(wrong_kind.verify(), Err(IndexProgramError::WrongKind { got: IndexKind::Pred, .. })));
    let compare_into_u64 = IndexProgram {
        ops: vec![
            IndexOp::Move { dst: a, a: Operand::Imm(1) },
            IndexOp::Compare { cmp: Compare::Lt, dst: b, a: a.into(), b: Operand::Imm(2) },
        ],
    };
    assert!(matches!(compare_into_u64.verify(), Err(IndexProgramError::WrongKind { op: 1, .. })));
}

struct Launch;

impl IndexInputs for Launch {
    fn special(&self, special: Special) -> u64 {
        match special {
            Special::BlockThreads => 256,
            Special::Block(axis) => 7 + axis.index() as u64,
            Special::Blocks(axis) => 100 + axis.index() as u64,
        }
    }
    fn given(&self, given: Given) -> u64 {
        match given {
            Given::Thread => 70,
            _ => 5,
        }
    }
}

/// As PTX computes: 32-bit registers wrap at 32 bits, `mul.wide.u32` keeps the whole product,
/// comparisons are unsigned, and a division is unsigned and rounds down.
#[test]
fn index_arithmetic_is_ptx_arithmetic() {
    let mut regs = IndexRegs::default();
    let (w, big, wide, q, lt, sel, t) =
        (regs.u32(), regs.u32(), regs.u64(), regs.u64(), regs.pred(), regs.u64(), regs.u32());
    let scratch =
        DivideScratch { either: regs.u64(), small: regs.pred(), a: regs.u32(), b: regs.u32(), quotient: regs.u32() };
    let program = IndexProgram {
        ops: vec![
            IndexOp::Read { dst: t, special: Special::Blocks(rc_core::geometry::Axis::Y) },
            IndexOp::Arith { op: Arith::Shr, dst: w, a: Given::Thread.into(), b: Operand::Imm(5) },
            IndexOp::Mad { dst: big, a: Operand::Imm(u64::from(u32::MAX)), b: Operand::Imm(2), c: w.into() },
            IndexOp::MulWide { dst: wide, a: Operand::Imm(u64::from(u32::MAX)), b: Operand::Imm(u64::from(u32::MAX)) },
            IndexOp::Divide { dst: q, a: wide.into(), b: Operand::Imm(3), scratch },
            IndexOp::Compare { cmp: Compare::Lt, dst: lt, a: Operand::Imm(u64::MAX), b: Operand::Imm(1) },
            IndexOp::Select { dst: sel, a: Operand::Imm(11), b: Operand::Imm(22), pred: lt },
        ],
    };
    program.verify().expect("well formed");
    let values = program.eval(&Launch);
    assert_eq!(values.get(t), 101);
    assert_eq!(values.get(w), 2);
    // (2^32 - 1) * 2 + 2 wraps to 0 in 32 bits.
    assert_eq!(values.get(big), 0);
    assert_eq!(values.get(wide), u64::from(u32::MAX) * u64::from(u32::MAX));
    assert_eq!(values.get(q), u64::from(u32::MAX) * u64::from(u32::MAX) / 3);
    assert_eq!(values.get(lt), 0);
    assert_eq!(values.get(sel), 22);
}
