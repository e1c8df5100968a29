//! `explain()` of the fused kernel ([`crate::time_steps`]): the tile each warp keeps in
//! registers for `T` steps, how its exact part shrinks step by step, what it stores, and how
//! the boundary rule holds at the domain's edges.

use std::fmt::{self, Write};

use crate::boundary::Boundary;
use crate::geometry::Dims;
use crate::time_steps::FusedTile;

/// Steps shown one by one; longer runs show their first and last ones.
const STEPS_SHOWN: u32 = 8;

pub(super) fn write(text: &mut String, tile: &FusedTile, boundary: Boundary) -> fmt::Result {
    let (t, r, k) = (tile.steps, tile.radius, tile.per_lane);
    let elements = tile.elements();
    writeln!(text)?;
    writeln!(text, "fused time steps: {t} steps per launch (run_steps, launch_steps, emulate_steps), one launch of the steps left (fused, or the one-step kernel for one)")?;
    let owner = match tile.spans_block() {
        true => "block",
        false => "warp",
    };
    writeln!(
        text,
        "  tile: {elements} elements per {owner}, loaded once; lane l owns elements {k}l..{k}l+{k} ({} vector loads of {} elements on interior tiles)",
        k / tile.width,
        tile.width
    )?;
    if tile.spans_block() {
        writeln!(
            text,
            "  a block tile: its {} lanes are {} hardware warps; each step lane 31 of each warp and lane 0 of the next swap their {r} edge elements through shared memory (one barrier), so only the block's two ends lose the halo",
            tile.warp,
            tile.warp / 32
        )?;
        writeln!(
            text,
            "  two kernels per launch, one after the other on one stream, each over every tile: the interior path on the tiles that lie inside the input, then the boundary path on the others (each kernel gets only its own path's registers)"
        )?;
    }
    match tile.dims {
        Dims::One => {}
        Dims::Two => write_strip(text, tile)?,
        Dims::Three => write_column(text, tile)?,
    }
    writeln!(text, "  each step: every lane computes its {k} elements from its own and {r} edge elements of each neighbour lane (shuffle up, shuffle down)")?;
    writeln!(text, "  the lanes at the tile's ends have no neighbour there, so the exact elements shrink by {r} at each end per step:")?;
    let shown: Vec<u32> = match t <= STEPS_SHOWN {
        true => (1..=t).collect(),
        false => (1..=STEPS_SHOWN / 2).chain(t + 1 - STEPS_SHOWN / 2..=t).collect(),
    };
    for (i, s) in shown.iter().enumerate() {
        if i > 0 && shown[i - 1] + 1 != *s {
            writeln!(text, "    ...")?;
        }
        writeln!(
            text,
            "    after step {s:>3}: elements {}..{} exact (halo {} each side)",
            s * r,
            elements - s * r,
            s * r
        )?;
    }
    let end = tile.lead + tile.outputs();
    writeln!(
        text,
        "  stored: elements {}..{end}, {} outputs per {owner} ({} per lane); {:.2} elements computed per output per step",
        tile.lead,
        tile.outputs(),
        match tile.outputs() % tile.warp {
            0 => format!("{}", tile.outputs() / tile.warp),
            _ => format!("{:.2}", f64::from(tile.outputs()) / f64::from(tile.warp)),
        },
        f64::from(elements) / f64::from(tile.outputs())
    )?;
    let rule = match boundary {
        Boundary::Zero if tile.dims == Dims::Three => {
            "after every step elements outside the input along x are set to 0, and so are the rows outside it along y of every plane a step computes; planes outside it along z read as 0 (columns that cross an edge only)"
        }
        Boundary::Clamp if tile.dims == Dims::Three => {
            "after every step elements outside the input along x take the row's value at x = 0 or n - 1, rows outside it along y the plane's edge row, and planes outside it along z read as the step's edge plane, still in its window (columns that cross an edge only)"
        }
        Boundary::Zero if tile.rows > 1 => {
            "after every step elements outside the input along x are set to 0, and rows outside it along y read as 0 (strips that cross an edge only)"
        }
        Boundary::Clamp if tile.rows > 1 => {
            "after every step elements outside the input along x take the row's value at x = 0 or n - 1, and rows outside it along y read as the step's edge row, still in its window (strips that cross an edge only)"
        }
        Boundary::Zero => "after every step elements outside the input are set to 0 (tiles that cross an edge only)",
        Boundary::Clamp => {
            "after every step elements outside the input take the step's value at index 0 or n - 1, broadcast from the lane that holds it (tiles that cross an edge only)"
        }
        Boundary::Wrap => "the tile loads from wrapped positions; a periodic domain needs no rule per step",
        Boundary::Valid => "elements outside the input are never stored; the output shrinks by 2 * radius per step",
    };
    writeln!(text, "  boundary `{boundary}`: {rule}")?;
    let reread = tile.computed_per_output();
    writeln!(
        text,
        "  memory per step: about {:.3} of the one-step kernel's (each element read and written once per {t} steps, the halo re-read)",
        reread / f64::from(t)
    )
}

/// 2D: how the warp streams down its strip with one window of rows per step.
fn write_strip(text: &mut String, tile: &FusedTile) -> fmt::Result {
    let (t, ry, rows) = (tile.steps, tile.radius_y, tile.rows);
    let fill = 2 * t * ry;
    writeln!(
        text,
        "  2D: each warp streams down a strip of {rows} output rows, one input row per iteration ({} iterations, the first {fill} only filling the windows, step s from iteration {} * s on)",
        rows + fill,
        2 * ry
    )?;
    writeln!(
        text,
        "  per step a window of the {} rows above its newest of the lane's {} elements in registers ({} words in all): step s computes the row {ry} above step s - 1's newest, so step {t}'s row is {} rows behind the input row",
        2 * ry,
        tile.per_lane,
        tile.window_words(),
        t * ry
    )?;
    writeln!(
        text,
        "  {:.3} elements computed per output and step (the x halo, and each strip's first rows computed twice)",
        tile.recompute()
    )?;
    if tile.splits() {
        writeln!(
            text,
            "  two kernels per launch, side by side on two streams, each over every strip: the interior path on the strips whose input lies inside the grid, the boundary path on the others (each kernel gets only its own path's registers)"
        )?;
    }
    Ok(())
}

/// 3D: how the warp streams along z through its column with one window of planes per step.
fn write_column(text: &mut String, tile: &FusedTile) -> fmt::Result {
    let (t, rz, ry, planes) = (tile.steps, tile.radius_z, tile.radius_y, tile.planes);
    let fill = 2 * t * rz;
    writeln!(
        text,
        "  3D: each warp streams along z through a column of {planes} output planes of {} rows, one input plane of {} rows per iteration ({} iterations, the first {fill} only filling the windows)",
        tile.rows,
        tile.plane_rows(0),
        planes + fill
    )?;
    let rows: Vec<String> = (0..=t).map(|s| tile.plane_rows(s).to_string()).collect();
    let held: u32 = (0..t).map(|s| (2 * rz + 1) * tile.plane_rows(s)).sum::<u32>() + tile.plane_rows(0);
    writeln!(
        text,
        "  per step a window of {} planes in registers; a plane of step 0, 1, ..., {t} has {} rows (the y halo shrinks by {ry} at each end per step): {} rows of the lane's {} elements in all with the next input plane",
        2 * rz + 1,
        rows.join(", "),
        held,
        tile.per_lane
    )?;
    writeln!(
        text,
        "  {:.3} elements computed per output and step (the x halo, the planes' y halo, and each column's first {fill} planes computed twice)",
        tile.recompute_volume()
    )
}
