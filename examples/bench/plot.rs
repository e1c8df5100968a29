//! The two SVG plots, per element type: the register cache's speedup over shared memory against
//! the radius (like the article's Figure 6), and every strategy's fraction of the roofline; and
//! [`chart`], the frame every benchmark plot draws in (these, the grid's and the split's).

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::AsRangedCoord;
use plotters::prelude::*;
use rc::Strategy;

use crate::bench::kernels::Variant;
use crate::bench::report::{best_per_radius, strategies, Row, COPY};
use crate::common::{fail, Result};

const SIZE: (u32, u32) = (960, 600);

/// Writes `speedup_<element>.svg` and `roofline_<element>.svg` into `dir` for each element type
/// in `rows`; returns the files written.
pub fn all(rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut elements: Vec<&str> = rows.iter().map(|r| r.element.as_str()).collect();
    elements.sort_unstable();
    elements.dedup();
    let mut written = Vec::new();
    for element in elements {
        let path = dir.join(format!("speedup_{element}.svg"));
        if speedup(rows, element, &path)? {
            written.push(path);
        }
        let path = dir.join(format!("roofline_{element}.svg"));
        if roofline(rows, element, &path)? {
            written.push(path);
        }
    }
    Ok(written)
}

/// What the plots say about the run, for the captions.
fn run_label(rows: &[Row], element: &str) -> String {
    let first = rows.iter().find(|r| r.element == element);
    let gpu = first.map_or("", |r| r.gpu.as_str());
    let n = first.map_or(0, |r| r.n);
    let n = if n.is_power_of_two() { format!("2^{}", n.trailing_zeros()) } else { n.to_string() };
    format!("{element}, n = {n}, {gpu}")
}

fn plot_error(path: &Path) -> impl Fn(Box<dyn std::error::Error>) -> Box<dyn std::error::Error> + '_ {
    move |e| fail(format!("plotting {}: {e}", path.display()))
}

/// What plotters' drawing calls return: their errors differ by backend and call, so boxed.
pub type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// A chart's frame: the SVG's size in pixels, the caption above it, and the room for the tick
/// labels under the x axis and left of the y axis.
pub struct Frame {
    pub size: (u32, u32),
    pub caption: String,
    pub label_areas: (u32, u32),
}

/// Draws one SVG chart at `path` over `x` by `y`: the frame every bench plot shares (white
/// background, caption, margins, the legend's box in the upper right), around `draw`, which
/// draws the mesh and the series (their axes, labels and styles differ from plot to plot). One
/// place for the frame keeps the plots alike; a failure names the file.
pub fn chart<X: AsRangedCoord, Y: AsRangedCoord>(
    path: &Path,
    frame: Frame,
    x: X,
    y: Y,
    draw: impl FnOnce(&mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X::CoordDescType, Y::CoordDescType>>) -> Drawn,
) -> Result<()> {
    let plot = || -> Drawn {
        let root = SVGBackend::new(path, frame.size).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&frame.caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(frame.label_areas.0)
            .y_label_area_size(frame.label_areas.1)
            .build_cartesian_2d(x, y)?;
        draw(&mut chart)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    plot().map_err(plot_error(path))
}

/// Up to six colours that stay apart in print.
pub const COLOURS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),   // red
    RGBColor(31, 119, 180),  // blue
    RGBColor(44, 160, 44),   // green
    RGBColor(255, 127, 14),  // orange
    RGBColor(148, 103, 189), // purple
    RGBColor(140, 86, 75),   // brown
];

fn x_range(rows: &[Row], element: &str) -> std::ops::Range<f64> {
    let max = rows.iter().filter(|r| r.element == element).map(|r| r.radius).max().unwrap_or(1);
    0.0..f64::from(max) + 2.0
}

// Both plots leave the top quarter free for the legend, above the data and the 1.0 line.

/// Figure (a). Returns false (writing nothing) when the rows have no speedups for `element`.
fn speedup(rows: &[Row], element: &str, path: &Path) -> Result<bool> {
    let rc_rows: Vec<&Row> = rows
        .iter()
        .filter(|r| r.element == element && r.strategy == Strategy::RegisterCache.name())
        .filter(|r| r.speedup_vs_shared_memory.is_some())
        .collect();
    if rc_rows.is_empty() {
        return Ok(false);
    }
    let mut ps: Vec<u32> = rc_rows.iter().filter_map(|r| r.outputs_per_thread).collect();
    ps.sort_unstable();
    ps.dedup();
    let top = rc_rows.iter().filter_map(|r| r.speedup_vs_shared_memory).fold(1.0f64, f64::max);
    let x = x_range(rows, element);
    let frame = Frame {
        size: SIZE,
        caption: format!("register cache over shared memory ({})", run_label(rows, element)),
        label_areas: (48, 64),
    };
    chart(path, frame, x.clone(), 0.0..top.max(1.0) * 1.4, |chart| {
        chart
            .configure_mesh()
            .x_desc("radius r ((2r+1)-tap average)")
            .y_desc("speedup: shared_memory time / register_cache time")
            .light_line_style(WHITE.mix(0.0))
            .x_label_formatter(&|r| format!("{r:.0}"))
            .draw()?;
        chart
            .draw_series(DashedLineSeries::new(vec![(x.start, 1.0), (x.end, 1.0)], 6, 6, BLACK.stroke_width(1)))?
            .label("1.0 = as fast as shared memory (same P)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK));
        for (i, p) in ps.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let mut points: Vec<(f64, f64)> = rc_rows
                .iter()
                .filter(|r| r.outputs_per_thread == Some(*p))
                .filter_map(|r| Some((f64::from(r.radius), r.speedup_vs_shared_memory?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
                .label(format!("P = {p} outputs per thread"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
            chart.draw_series(points.into_iter().map(|pt| Circle::new(pt, 4, colour.filled())))?;
        }
        Ok(())
    })?;
    Ok(true)
}

/// Figure (b): per strategy its best P at each radius, the peers, and the copy.
fn roofline(rows: &[Row], element: &str, path: &Path) -> Result<bool> {
    let series: Vec<(String, Vec<&Row>)> = strategies(rows)
        .into_iter()
        .map(|s| {
            let best = best_per_radius(rows, element, &s);
            (s, best)
        })
        .filter(|(_, best)| best.iter().any(|r| r.fraction_of_roofline.is_some()))
        .collect();
    let copies = best_per_radius(rows, element, COPY);
    if series.is_empty() && copies.is_empty() {
        return Ok(false);
    }
    let top = series
        .iter()
        .flat_map(|(_, best)| best.iter().filter_map(|r| r.fraction_of_roofline))
        .chain(copies.iter().filter_map(|r| r.fraction_of_roofline))
        .fold(1.0f64, f64::max);
    let x = x_range(rows, element);
    let points = |best: &[&Row]| -> Vec<(f64, f64)> {
        best.iter().filter_map(|r| Some((f64::from(r.radius), r.fraction_of_roofline?))).collect()
    };
    let frame = Frame {
        size: SIZE,
        caption: format!("fraction of the roofline, best P per strategy ({})", run_label(rows, element)),
        label_areas: (48, 64),
    };
    chart(path, frame, x, 0.0..top.max(1.0) * 1.45, |chart| {
        chart
            .configure_mesh()
            .x_desc("radius r ((2r+1)-tap average)")
            .y_desc("effective GB/s / min(copy GB/s, arithmetic bound)")
            .light_line_style(WHITE.mix(0.0))
            .x_label_formatter(&|r| format!("{r:.0}"))
            .draw()?;
        let copy_points = points(&copies);
        chart
            .draw_series(LineSeries::new(copy_points.clone(), BLACK.stroke_width(2)))?
            .label("device-to-device copy (1.0 where it is the roofline)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(2)));
        chart.draw_series(copy_points.into_iter().map(|pt| Circle::new(pt, 3, BLACK.filled())))?;
        for (i, (strategy, best)) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts = points(best);
            let label = if best.iter().any(|r| r.outputs_per_thread.is_some()) {
                format!("{strategy} (best P)")
            } else {
                strategy.clone()
            };
            let style = colour.stroke_width(2);
            if Variant::is_label(strategy) {
                chart.draw_series(LineSeries::new(pts.clone(), style))?
            } else {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))?
            }
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
            chart.draw_series(pts.into_iter().map(|pt| Circle::new(pt, 4, colour.filled())))?;
        }
        Ok(())
    })?;
    Ok(true)
}
