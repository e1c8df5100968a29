//! The grid benchmark's two SVG plots: per stencil, a group of bars, one per [`Series`] (copy,
//! rc's default and best register cache, rc's baselines, CuPy, PyTorch): GB/s in one, the
//! fraction of the roofline in the other.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::bench::grid::report::{groups, Group, Row, Series};
use crate::bench::plot::{chart, Frame, COLOURS};
use crate::common::Result;

const SIZE: (u32, u32) = (1280, 640);

/// One of the plots: its file, what its y axis shows, the value of a row, and where a dashed
/// line goes.
struct Plot {
    file: &'static str,
    y_desc: &'static str,
    value: fn(&Row) -> Option<f64>,
    line_at: Option<f64>,
}

const PLOTS: [Plot; 2] = [
    Plot {
        file: "grid_gb_per_s.svg",
        y_desc: "effective GB/s: (input + output bytes) / median time",
        value: |r| Some(r.gb_per_s),
        line_at: None,
    },
    Plot {
        file: "grid_roofline.svg",
        y_desc: "fraction of the roofline: GB/s / min(copy, FP add bound)",
        value: |r| r.fraction_of_roofline,
        line_at: Some(1.0),
    },
];

/// Writes `grid_gb_per_s.svg` and `grid_roofline.svg` into `dir`; returns the files written.
pub fn all(rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for plot in &PLOTS {
        let path = dir.join(plot.file);
        if bars(rows, &path, plot)? {
            written.push(path);
        }
    }
    Ok(written)
}

/// The series' colours: the copy black, the others as the 1D plots colour theirs.
fn colour(series: Series) -> RGBColor {
    match Series::ALL.iter().position(|s| *s == series) {
        Some(0) | None => BLACK,
        Some(i) => COLOURS[(i - 1) % COLOURS.len()],
    }
}

/// `stencil` or `stencil f64`: f32 is the benchmark's default element type.
fn group_label(group: &Group) -> String {
    match group.1.as_str() {
        "f32" => group.0.clone(),
        other => format!("{} {other}", group.0),
    }
}

/// One bar per series and group, of the plot's value of the series' row, and its dashed line;
/// false (nothing written) when no row has a value.
fn bars(rows: &[Row], path: &Path, plot: &Plot) -> Result<bool> {
    let (value, line_at) = (plot.value, plot.line_at);
    let groups = groups(rows);
    let top = rows.iter().filter_map(value).fold(line_at.unwrap_or(0.0), f64::max);
    if groups.is_empty() || top <= 0.0 {
        return Ok(false);
    }
    let gpu = rows.first().map_or("", |r| r.gpu.as_str());
    // One segment per bar and a gap per group; the group's name under its middle bar.
    let per_group = Series::ALL.len() as i32 + 1;
    let middle = per_group / 2 - 1;
    let x = (0..groups.len() as i32 * per_group).into_segmented();
    let frame =
        Frame { size: SIZE, caption: format!("2D and 3D stencils, boundary clamp ({gpu})"), label_areas: (40, 72) };
    chart(path, frame, x, 0.0..top * 1.4, |chart| {
        let label = |x: &SegmentValue<i32>| match x {
            SegmentValue::CenterOf(j) if j % per_group == middle => {
                groups.get((j / per_group) as usize).map(group_label).unwrap_or_default()
            }
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .y_desc(plot.y_desc)
            .light_line_style(WHITE.mix(0.0))
            .disable_x_mesh()
            .x_labels(groups.len() * per_group as usize)
            .x_label_formatter(&label)
            .draw()?;
        if let Some(level) = line_at {
            let end = groups.len() as i32 * per_group;
            chart.draw_series(DashedLineSeries::new(
                vec![(SegmentValue::Exact(0), level), (SegmentValue::Exact(end), level)],
                6,
                6,
                BLACK.stroke_width(1),
            ))?;
        }
        for (k, series) in Series::ALL.into_iter().enumerate() {
            let colour = colour(series);
            let bars: Vec<Rectangle<(SegmentValue<i32>, f64)>> = groups
                .iter()
                .enumerate()
                .filter_map(|(i, group)| {
                    let v = value(series.pick(rows, group)?)?;
                    let at = i as i32 * per_group + k as i32;
                    Some(Rectangle::new(
                        [(SegmentValue::Exact(at), 0.0), (SegmentValue::Exact(at + 1), v)],
                        colour.filled(),
                    ))
                })
                .collect();
            if bars.is_empty() {
                continue;
            }
            chart
                .draw_series(bars)?
                .label(series.label())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
        }
        Ok(())
    })?;
    Ok(true)
}
