//! `explain()` of 2D and 3D stencils, as a person reads it: the tile, the input box, which lane
//! keeps which element of each input row, which input rows each output row reads and loads,
//! the shuffles, what streams per step and how a 2D block stacks its warps; the whole text of a
//! small 2D and a small 3D case.

mod common;

use common::grid_sum;
use rc_core::body::Body;
use rc_core::machine::Stmt;
use rc_core::{Boundary, Explanation, Layout, Pattern, Radius, Strategy, WarpProgram};

/// The centre and the arms of a star of `radius`, summed in that order.
fn star(radius: Radius) -> Body {
    grid_sum(radius, false)
}

fn window_2d() -> WarpProgram {
    let pattern = Pattern::grid(Radius::yx(1, 1), 4, 2, 2, 1, Boundary::Clamp).expect("a pattern");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(2), &star(Radius::yx(1, 1)))
        .expect("compiles")
}

fn pattern_3d() -> Pattern {
    Pattern::grid(Radius::zyx(1, 1, 1), 4, 1, 2, 1, Boundary::Zero).expect("a pattern")
}

/// Compares line by line, so that a failure names the first line that differs.
fn assert_text(got: &str, want: &str) {
    for (k, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {} differs; whole text:\n{got}", k + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count(), "whole text:\n{got}");
}

#[test]
fn a_2d_window_tile_is_explained_row_by_row() {
    assert_text(&Explanation::new("star", &window_2d()).to_string(), WINDOW_2D);
}

#[test]
fn a_3d_round_robin_tile_says_which_planes_each_output_row_reads_and_what_it_shuffles() {
    let program = WarpProgram::compile_for(
        pattern_3d(),
        Strategy::RegisterCache,
        Layout::RoundRobin,
        &star(Radius::zyx(1, 1, 1)),
    )
    .expect("compiles");
    assert_text(&Explanation::new("star3", &program).to_string(), ROUND_ROBIN_3D);
}

#[test]
fn the_baselines_say_where_each_output_row_reads_its_taps() {
    let body = star(Radius::zyx(1, 1, 1));
    let naive = WarpProgram::compile_for(pattern_3d(), Strategy::Naive, Layout::RoundRobin, &body).expect("compiles");
    let text = Explanation::new("naive3", &naive).to_string();
    assert!(text.contains("output rows (every tap is read from global memory):\n"), "{text}");
    // Row 1 reads 7 taps; 2 of them (input rows 5 and 6 at x offset 0) row 0 has read already.
    assert!(
        text.contains("  row 0 (z 0, y 0): reads input rows 1 4 5 6 9; 0 shuffles, 7 taps read from global memory\n"),
        "{text}"
    );
    assert!(
        text.contains("  row 1 (z 0, y 1): reads input rows 2 5 6 7 10; 0 shuffles, 5 taps read from global memory\n"),
        "{text}"
    );
    let shared =
        WarpProgram::compile_for(pattern_3d(), Strategy::SharedMemory, Layout::RoundRobin, &body).expect("compiles");
    let text = Explanation::new("shared3", &shared).to_string();
    assert!(
        text.contains("strategy: shared memory: each warp stages its tile's 12 input rows of 6 elements"),
        "{text}"
    );
    assert!(
        text.contains("  row 1 (z 0, y 1): reads input rows 2 5 6 7 10; 0 shuffles, 5 taps read from shared memory\n"),
        "{text}"
    );
}

#[test]
fn a_machine_loop_is_explained_as_the_steps_it_streams() {
    let mut program = window_2d();
    let straight = std::mem::take(&mut program.machine.body);
    program.machine.body = vec![Stmt::Loop { times: 3, body: straight }];
    let text = Explanation::new("star", &program).to_string();
    // One step is the interior path of the tile: its 12 cache registers per lane over the 4
    // input rows, in 8 loads (rows 0 and 3 one aligned vector of 2 each; rows 1 and 2, from
    // e(2l + 1), a scalar, a vector, a scalar), and the 2 output rows' 4 outputs per lane in 2
    // vector stores.
    let line = "streams 3 steps: each step loads 12 values (8 loads) of input rows 0 1 2 3 and stores 4 values (2 stores) of output rows 0 1";
    assert!(text.lines().any(|l| l == line), "no line `{line}` in:\n{text}");
    assert!(!text.contains("streams: nothing"), "{text}");
}

const WINDOW_2D: &str = "\
stencil `star`: radius (1, 1), warp 4, outputs_per_thread 2, rows_per_warp 2, boundary clamp, element f32
distribution: windows of 2 outputs: lane l caches tile elements 2l .. 2l + 5 of each row of 8, rc[row * 5 + i] = element row * 8 + 2l + i (halo from L1, no shuffles)
cache along x, per input row: 4 registers per lane (4 x 32-bit), each loaded just before its first reader; outputs computed as a wavefront (step i: every output's tap on window element i)
launch bounds: none declared (the launch uses blocks of 256 threads; ptxas allocates registers for any block size)
registers: 5 cached registers + 2 live values + 8 for addressing = 15 registers per thread (estimated; ptxas -v gives the real count)
tile: 4 lanes x 2 outputs per lane along x = 8 outputs per row, 2 rows per warp: 16 outputs per warp
blocks: the block's 64 warps stack along y (warp w computes output rows 2w .. 2w + 2 of the block's 128 rows), so the 2 input rows neighbouring warps share are read through the SM's L1, not each through L2; the launch is a grid of block columns by bands of 128 rows
input box: 4 rows (2 + 2 x 1) of 10 elements (8 + 2 x 1) around the tile
cache: lane l keeps, of each input row it loads (rc[k * 10 + i] of row k is the x schedule's rc[i]; e = tile element):
  row 0 (y -1): rc[2..3] = e(2l + 2) .. e(2l + 3)
  row 1 (y +0): rc[11..14] = e(2l + 1) .. e(2l + 4)
  row 2 (y +1): rc[21..24] = e(2l + 1) .. e(2l + 4)
  row 3 (y +2): rc[32..33] = e(2l + 2) .. e(2l + 3)
loads per warp: 48 values into registers, 36 distinct input elements of the box's 40: 2.250 per output (the halo beyond 1 per output is loaded again by the neighbouring tiles)
output rows (each input row is loaded once, before the first output row that reads it, and kept in registers):
  row 0 (y 0): reads input rows 0 1 2; loads 0 1 2 (10 registers), keeps none from earlier rows; 0 shuffles
  row 1 (y 1): reads input rows 1 2 3; loads 3 (2 registers), keeps 1 2 from earlier rows; 0 shuffles
streams: nothing (straight-line code: no loop along z or y; each input row of the tile is loaded once)
taps used along x: [-1, 0, 1]
reads: 6 (output, tap) pairs per lane -> 4 fetches: 4 local, 0 shuffle phases, 2 served by a value already fetched
shuffles per output: 0.000 (the article's recipe: 2 for a full window)
R(Tj, rc[i]) = read rc[i] of lane j;  P(rc[i]) = publish rc[i];  taps as output:offset

step 1: local, no shuffle: taps 0:+0 1:-1
          T0            T1            T2            T3
  read    R(T0,rc[2])   R(T1,rc[2])   R(T2,rc[2])   R(T3,rc[2])
  publish -             -             -             -
  element e2            e4            e6            e8

step 2: local, no shuffle: taps 0:-1
          T0            T1            T2            T3
  read    R(T0,rc[1])   R(T1,rc[1])   R(T2,rc[1])   R(T3,rc[1])
  publish -             -             -             -
  element e1            e3            e5            e7

step 3: local, no shuffle: taps 0:+1 1:+0
          T0            T1            T2            T3
  read    R(T0,rc[3])   R(T1,rc[3])   R(T2,rc[3])   R(T3,rc[3])
  publish -             -             -             -
  element e3            e5            e7            e9

step 4: local, no shuffle: taps 1:+1
          T0            T1            T2            T3
  read    R(T0,rc[4])   R(T1,rc[4])   R(T2,rc[4])   R(T3,rc[4])
  publish -             -             -             -
  element e4            e6            e8            e10
";

const ROUND_ROBIN_3D: &str = "\
stencil `star3`: radius (1, 1, 1), warp 4, outputs_per_thread 1, rows_per_warp 2, planes_per_warp 1, boundary zero, element f32
distribution: round-robin: tile element e -> lane e mod 4, rc[e div 4]
cache along x, per input row: 2 of 2 registers per lane loaded (2 x 32-bit)
launch bounds: none declared (the launch uses blocks of 256 threads; ptxas allocates registers for any block size)
registers: 16 cached registers + 1 live values + 10 for addressing = 27 registers per thread (estimated; ptxas -v gives the real count)
tile: 4 lanes x 1 outputs per lane along x = 4 outputs per row, 2 rows per warp x 1 planes per warp: 8 outputs per warp
input box: 3 planes (1 + 2 x 1) of 4 rows (2 + 2 x 1) (input row k: plane k / 4, row k % 4) of 6 elements (4 + 2 x 1) around the tile
cache: lane l keeps, of each input row it loads (rc[k * 2 + i] of row k is the x schedule's rc[i]; e = tile element):
  row 1 (z -1, y +0): rc[2] = e(l) in lanes T1-T3, rc[3] = e(l + 4) in lane T0
  row 2 (z -1, y +1): rc[4] = e(l) in lanes T1-T3, rc[5] = e(l + 4) in lane T0
  row 4 (z +0, y -1): rc[8] = e(l) in lanes T1-T3, rc[9] = e(l + 4) in lane T0
  row 5 (z +0, y +0): rc[10] = e(l), rc[11] = e(l + 4) in lanes T0-T1
  row 6 (z +0, y +1): rc[12] = e(l), rc[13] = e(l + 4) in lanes T0-T1
  row 7 (z +0, y +2): rc[14] = e(l) in lanes T1-T3, rc[15] = e(l + 4) in lane T0
  row 9 (z +1, y +0): rc[18] = e(l) in lanes T1-T3, rc[19] = e(l + 4) in lane T0
  row 10 (z +1, y +1): rc[20] = e(l) in lanes T1-T3, rc[21] = e(l + 4) in lane T0
loads per warp: 36 values into registers, 36 distinct input elements of the box's 72: 4.500 per output (the halo beyond 1 per output is loaded again by the neighbouring tiles)
output rows (each input row is loaded once, before the first output row that reads it, and kept in registers):
  row 0 (z 0, y 0): reads input rows 1 4 5 6 9; loads 1 4 5 6 9 (10 registers), keeps none from earlier rows; 6 shuffles
  row 1 (z 0, y 1): reads input rows 2 5 6 7 10; loads 2 7 10 (6 registers), keeps 5 6 from earlier rows; 4 shuffles
streams: nothing (straight-line code: no loop along z or y; each input row of the tile is loaded once)
taps used along x: [-1, 0, 1]
reads: 3 (output, tap) pairs per lane -> 3 fetches: 1 local, 2 shuffle phases, 0 served by a value already fetched
shuffles per output: 5.000 (the article's recipe: 2 for a full window)
R(Tj, rc[i]) = read rc[i] of lane j;  P(rc[i]) = publish rc[i];  taps as output:offset

step 1: shuffle, lane l reads lane (l + 1) mod 4: taps 0:+0
          T0            T1            T2            T3
  read    R(T1,rc[0])   R(T2,rc[0])   R(T3,rc[0])   R(T0,rc[1])
  publish P(rc[1])      P(rc[0])      P(rc[0])      P(rc[0])
  element e1            e2            e3            e4

step 2: local, no shuffle: taps 0:-1
          T0            T1            T2            T3
  read    R(T0,rc[0])   R(T1,rc[0])   R(T2,rc[0])   R(T3,rc[0])
  publish -             -             -             -
  element e0            e1            e2            e3

step 3: shuffle, lane l reads lane (l + 2) mod 4: taps 0:+1
          T0            T1            T2            T3
  read    R(T2,rc[0])   R(T3,rc[0])   R(T0,rc[1])   R(T1,rc[1])
  publish P(rc[1])      P(rc[1])      P(rc[0])      P(rc[0])
  element e2            e3            e4            e5
";
