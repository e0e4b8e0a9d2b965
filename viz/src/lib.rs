//! gpusim-viz: charts from gpusim's statistics JSON (`gpusim run --stats-json`), as PNG or
//! SVG (chosen by the output file's extension).
//!
//! Architecture invariant: reads only the stats JSON schema (an API boundary of `sim`), so it
//! depends on no simulator code.

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum VizError {
    #[error("{0}")]
    Input(String),
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The chart could not be written to `path`.
    #[error("cannot write {path}: {message}")]
    Output { path: String, message: String },
}

fn draw_err<E: std::fmt::Display>(e: E) -> VizError {
    VizError::Draw(e.to_string())
}

/// What a failed `present` says: the I/O error inside the bitmap backend's error (whose
/// `Display` is its `Debug` form, `ImageError(IoError(Os { .. }))`).
fn present_error(
    path: &Path,
    e: DrawingAreaErrorKind<plotters_bitmap::BitMapBackendError>,
) -> VizError {
    use plotters_bitmap::BitMapBackendError as B;
    let message = match &e {
        DrawingAreaErrorKind::BackendError(plotters_backend::DrawingErrorKind::DrawingError(b)) => {
            match b {
                B::IOError(io) => io.to_string(),
                B::ImageError(image::ImageError::IoError(io)) => io.to_string(),
                B::ImageError(other) => other.to_string(),
                B::InvalidBuffer => "the image buffer is invalid".into(),
                #[allow(unreachable_patterns)]
                _ => e.to_string(),
            }
        }
        _ => e.to_string(),
    };
    VizError::Output {
        path: path.display().to_string(),
        message,
    }
}

/// The chart kinds `gpusim plot` can draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chart {
    /// Warp-cycles per stall state, one stacked bar per kernel (fractions of its total).
    Stalls,
    /// Issued warp instructions by number of active lanes (SIMD efficiency histogram).
    Simd,
    /// Power (with its limit) and the core clock over simulated time, launch after launch
    /// (`clock.timeline` of each kernel).
    Power,
    /// The hottest PTX lines of the source view (`kernels[].source`, launches summed): one
    /// bar per line, its warp-cycles split by stall state.
    Lines,
    /// Per-SM occupancy over time from a `gpusim run --timeline` file (not a stats file): one
    /// row per SM, each time bucket shaded by the SM's average live warps (not finished).
    Timeline,
}

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Registering a bundled font cannot fail for a valid TTF; if it did, text would be
        // missing but the chart still drawn.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// One launch of a correlation chart: its label, measured and simulated time (µs).
#[derive(Clone, Debug)]
pub struct Point {
    pub label: String,
    pub measured_us: f64,
    pub simulated_us: f64,
}

/// What is drawn: a chart of a stats document, or a correlation of simulated against
/// measured times.
enum Figure<'a> {
    Stats(Chart, &'a Value),
    Correlation(&'a [Point], &'a str),
}

/// Draw `chart` from a stats JSON document into `out` (`.png` or `.svg`). The chart is drawn
/// into a temporary file beside `out` and renamed over it when complete, so a failure (bad
/// input, an unwritable place) leaves no blank or partial image behind.
pub fn plot(chart: Chart, stats: &Value, out: &Path) -> Result<(), VizError> {
    render(Figure::Stats(chart, stats), out)
}

/// Draw `chart` from a stats JSON document as an SVG document in memory (`size` in pixels),
/// for pages that inline their charts (`gpusim report`).
pub fn svg(chart: Chart, stats: &Value, size: (u32, u32)) -> Result<String, VizError> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&Figure::Stats(chart, stats), &root)?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// Draw simulated against measured time per launch (log–log, the diagonal where they agree,
/// and ±15 % lines, as Accel-Sim's correlation plots have them) into `out`, with `title`
/// (e.g. the GPU, the config, the mean absolute error and the correlation).
pub fn plot_correlation(points: &[Point], title: &str, out: &Path) -> Result<(), VizError> {
    if points.is_empty() {
        return Err(VizError::Input("no launches to plot".into()));
    }
    if let Some(p) = points
        .iter()
        .find(|p| !(p.measured_us > 0.0 && p.simulated_us > 0.0))
    {
        return Err(VizError::Input(format!(
            "{}: times must be positive to plot on a log scale",
            p.label
        )));
    }
    render(Figure::Correlation(points, title), out)
}

/// The image format `out` asks for (`svg` or `png`), or the error naming the choices — for a
/// command to check before it does the work the chart shows.
pub fn image_format(out: &Path) -> Result<&'static str, VizError> {
    match out.extension().and_then(|e| e.to_str()) {
        Some("svg") => Ok("svg"),
        Some("png") => Ok("png"),
        _ => Err(VizError::Input(format!(
            "{}: the output must end in .png or .svg",
            out.display()
        ))),
    }
}

fn render(figure: Figure, out: &Path) -> Result<(), VizError> {
    register_font();
    let size = (960, 540);
    let ext = image_format(out)?;
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("chart");
    let tmp = out.with_file_name(format!(".{name}.{}.tmp.{ext}", std::process::id()));
    let drawn = match ext {
        "svg" => {
            let root = SVGBackend::new(&tmp, size).into_drawing_area();
            draw(&figure, &root).and_then(|()| {
                root.present().map_err(|e| VizError::Output {
                    path: out.display().to_string(),
                    message: match e {
                        DrawingAreaErrorKind::BackendError(
                            plotters_backend::DrawingErrorKind::DrawingError(io),
                        ) => io.to_string(),
                        other => other.to_string(),
                    },
                })
            })
        }
        _ => {
            let root = BitMapBackend::new(&tmp, size).into_drawing_area();
            draw(&figure, &root).and_then(|()| root.present().map_err(|e| present_error(out, e)))
        }
    };
    // The backends write on drop too: the temporary file goes whatever happened.
    let kept = drawn.and_then(|()| {
        std::fs::rename(&tmp, out).map_err(|e| VizError::Output {
            path: out.display().to_string(),
            message: e.to_string(),
        })
    });
    let _ = std::fs::remove_file(&tmp);
    kept
}

fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), VizError> {
    root.fill(&WHITE).map_err(draw_err)?;
    match *figure {
        Figure::Stats(Chart::Stalls, stats) => stalls(stats, root),
        Figure::Stats(Chart::Simd, stats) => simd(stats, root),
        Figure::Stats(Chart::Power, stats) => power(stats, root),
        Figure::Stats(Chart::Lines, stats) => lines(stats, root),
        Figure::Stats(Chart::Timeline, trace) => occupancy(trace, root),
        Figure::Correlation(points, title) => correlation(points, title, root),
    }
}

fn correlation<DB: DrawingBackend>(
    points: &[Point],
    title: &str,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), VizError> {
    let all = points.iter().flat_map(|p| [p.measured_us, p.simulated_us]);
    let (lo, hi) = all.fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    // A decade's margin keeps points off the frame (and a single point drawable).
    let range = (lo / 2.0)..(hi * 2.0);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(range.clone().log_scale(), range.clone().log_scale())
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc("measured time (µs)")
        .y_desc("simulated time (µs)")
        .draw()
        .map_err(draw_err)?;
    // y = f·x, kept inside the frame (a point outside it would be drawn at its edge).
    let line = |f: f64| {
        let (x0, x1) = (
            range.start.max(range.start / f),
            range.end.min(range.end / f),
        );
        vec![(x0, x0 * f), (x1, x1 * f)]
    };
    chart
        .draw_series(LineSeries::new(line(1.0), BLACK.stroke_width(1)))
        .map_err(draw_err)?
        .label("simulated = measured")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    for f in [0.85, 1.15] {
        chart
            .draw_series(LineSeries::new(line(f), BLACK.mix(0.35).stroke_width(1)))
            .map_err(draw_err)?;
    }
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.measured_us, p.simulated_us), 4, BLUE.mix(0.8).filled())),
        )
        .map_err(draw_err)?
        .label("launch (grey lines: ±15 %)")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLUE.mix(0.8).filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(draw_err)?;
    Ok(())
}

/// One launch's row of the stall chart: kernel name and (state, warp-cycles) pairs.
pub type StallRow = (String, Vec<(String, u64)>);

/// The stall rows of every kernel launch in the document.
pub fn stall_table(stats: &Value) -> Result<Vec<StallRow>, VizError> {
    let kernels = stats["kernels"]
        .as_array()
        .ok_or_else(|| VizError::Input("stats JSON has no `kernels` list".into()))?;
    kernels
        .iter()
        .map(|k| {
            let name = k["kernel"].as_str().unwrap_or("?").to_string();
            let st = k["stalls"]
                .as_object()
                .ok_or_else(|| VizError::Input(format!("kernel `{name}` has no `stalls`")))?;
            Ok((
                name,
                st.iter()
                    .map(|(s, v)| (s.clone(), v.as_u64().unwrap_or(0)))
                    .collect(),
            ))
        })
        .collect()
}

fn stalls<DB: DrawingBackend>(
    stats: &Value,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), VizError> {
    let table = stall_table(stats)?;
    if table.is_empty() {
        return Err(VizError::Input("stats JSON lists no kernels".into()));
    }
    let states: Vec<String> = table[0].1.iter().map(|(s, _)| s.clone()).collect();
    let n = table.len();
    // The legend gets its own column right of the plot, so it never covers a bar.
    let (plot, side) = root.split_horizontally(root.dim_in_pixel().0 * 78 / 100);
    let mut chart = ChartBuilder::on(&plot)
        .caption("Warp-cycles by state", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(180)
        .build_cartesian_2d(0f64..1f64, (0..n).into_segmented())
        .map_err(draw_err)?;
    // launches are numbered: a manifest may launch one kernel several times
    let names: Vec<String> = table
        .iter()
        .enumerate()
        .map(|(i, (k, _))| format!("{}: {k}", i + 1))
        .collect();
    // At most ~24 labels fit the axis; with more launches every k-th is named.
    let every = n.div_ceil(24).max(1);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n.min(24))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if i % every == 0 => {
                names.get(*i).cloned().unwrap_or_default()
            }
            _ => String::new(),
        })
        .x_desc("fraction of resident warp-cycles")
        .draw()
        .map_err(draw_err)?;
    let mut shown = Vec::new();
    for (si, state) in states.iter().enumerate() {
        let color = Palette99::pick(si).filled();
        let bars: Vec<Rectangle<(f64, SegmentValue<usize>)>> = table
            .iter()
            .enumerate()
            .filter_map(|(ki, (_, row))| {
                let total: u64 = row.iter().map(|(_, v)| v).sum();
                if total == 0 || row[si].1 == 0 {
                    return None;
                }
                let before: u64 = row.iter().take(si).map(|(_, v)| v).sum();
                let (x0, x1) = (
                    before as f64 / total as f64,
                    (before + row[si].1) as f64 / total as f64,
                );
                Some(Rectangle::new(
                    [
                        (x0, SegmentValue::Exact(ki)),
                        (x1, SegmentValue::Exact(ki + 1)),
                    ],
                    color,
                ))
            })
            .collect();
        if !bars.is_empty() {
            shown.push((si, state.as_str()));
        }
        chart.draw_series(bars).map_err(draw_err)?;
    }
    // The legend: the states that occur, in the bars' order.
    side_legend(&side, &shown)
}

/// A legend in its own column: a swatch of palette colour `i` and the name, one per row.
fn side_legend<DB: DrawingBackend>(
    side: &DrawingArea<DB, Shift>,
    entries: &[(usize, &str)],
) -> Result<(), VizError> {
    for (row, (i, name)) in entries.iter().enumerate() {
        let y = 60 + 22 * row as i32;
        side.draw(&Rectangle::new(
            [(4, y - 6), (18, y + 6)],
            Palette99::pick(*i).filled(),
        ))
        .map_err(draw_err)?;
        side.draw(&Text::new(
            name.to_string(),
            (24, y - 7),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(draw_err)?;
    }
    Ok(())
}

/// One PTX line of the lines chart: its label and (state, warp-cycles) pairs.
pub type LineRow = (String, Vec<(String, u64)>);

/// The `n` lines with the most warp-cycles over every launch's source view, hottest first.
pub fn hottest_lines(stats: &Value, n: usize) -> Result<Vec<LineRow>, VizError> {
    let kernels = stats["kernels"]
        .as_array()
        .ok_or_else(|| VizError::Input("stats JSON has no `kernels` list".into()))?;
    // (file, line) → its row.
    let mut by_line: std::collections::BTreeMap<(String, u64), LineRow> = Default::default();
    for k in kernels {
        let Some(lines) = k["source"]["lines"].as_array() else {
            continue;
        };
        let file = k["source"]["file"].as_str().unwrap_or("").to_string();
        for l in lines {
            let line = l["line"].as_u64().unwrap_or(0);
            let text = l["text"].as_str().unwrap_or("");
            let e = by_line
                .entry((file.clone(), line))
                .or_insert_with(|| (format!("{line}: {text}"), Vec::new()));
            for (state, v) in l["stalls"].as_object().into_iter().flatten() {
                let v = v.as_u64().unwrap_or(0);
                match e.1.iter_mut().find(|(s, _)| s == state) {
                    Some(x) => x.1 += v,
                    None => e.1.push((state.clone(), v)),
                }
            }
        }
    }
    if by_line.is_empty() {
        return Err(VizError::Input(
            "no kernel has a source view (`source`, written by `gpusim run --stats-json`)".into(),
        ));
    }
    let mut rows: Vec<LineRow> = by_line.into_values().collect();
    let total = |r: &LineRow| r.1.iter().map(|(_, v)| v).sum::<u64>();
    rows.sort_by_key(|r| std::cmp::Reverse(total(r)));
    rows.truncate(n);
    Ok(rows)
}

fn lines<DB: DrawingBackend>(stats: &Value, root: &DrawingArea<DB, Shift>) -> Result<(), VizError> {
    let mut rows = hottest_lines(stats, 15)?;
    // The hottest on top: segment 0 is drawn at the bottom.
    rows.reverse();
    let mut states: Vec<String> = rows
        .iter()
        .flat_map(|r| r.1.iter().map(|(s, _)| s.clone()))
        .collect();
    states.sort();
    states.dedup();
    let max = rows
        .iter()
        .map(|r| r.1.iter().map(|(_, v)| v).sum::<u64>())
        .max()
        .unwrap_or(1)
        .max(1);
    let n = rows.len();
    let (plot, side) = root.split_horizontally(root.dim_in_pixel().0 * 80 / 100);
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            "Hottest PTX lines: warp-cycles waiting to issue them",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(260)
        .build_cartesian_2d(0u64..max + max / 20 + 1, (0..n).into_segmented())
        .map_err(draw_err)?;
    let labels: Vec<String> = rows
        .iter()
        .map(|(l, _)| {
            let mut l = l.clone();
            if l.chars().count() > 38 {
                l = l.chars().take(37).collect::<String>() + "…";
            }
            l
        })
        .collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                labels.get(*i).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        })
        .x_desc("warp-cycles")
        .draw()
        .map_err(draw_err)?;
    for (si, state) in states.iter().enumerate() {
        let bars: Vec<Rectangle<(u64, SegmentValue<usize>)>> = rows
            .iter()
            .enumerate()
            .filter_map(|(ri, (_, st))| {
                let v = st.iter().find(|(s, _)| s == state)?.1;
                let before: u64 = states[..si]
                    .iter()
                    .filter_map(|s| st.iter().find(|(x, _)| x == s).map(|x| x.1))
                    .sum();
                Some(Rectangle::new(
                    [
                        (before, SegmentValue::Exact(ri)),
                        (before + v, SegmentValue::Exact(ri + 1)),
                    ],
                    Palette99::pick(si).filled(),
                ))
            })
            .collect();
        chart.draw_series(bars).map_err(draw_err)?;
    }
    let entries: Vec<(usize, &str)> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (i, s.as_str()))
        .collect();
    side_legend(&side, &entries)
}

/// One SM's row of the occupancy chart: its process id in the trace (`SM k` = pid k + 1) and
/// live warp-time per bucket (µs × warps).
pub type OccupancyRow = (u64, Vec<f64>);

/// Per SM, the live warp-time in each of `buckets` equal time buckets, and the trace's span in
/// µs.
pub fn occupancy_grid(trace: &Value, buckets: usize) -> Result<(Vec<OccupancyRow>, f64), VizError> {
    let events = trace["traceEvents"].as_array().ok_or_else(|| {
        VizError::Input("not a `gpusim run --timeline` file: no `traceEvents`".into())
    })?;
    let warp = |e: &&Value| e["ph"] == "X" && e["cat"] == "warp" && e["name"] != "finished";
    let span = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| e["ts"].as_f64().unwrap_or(0.0) + e["dur"].as_f64().unwrap_or(0.0))
        .fold(0.0f64, f64::max);
    if span <= 0.0 {
        return Err(VizError::Input("the timeline has no slices".into()));
    }
    let width = span / buckets as f64;
    let mut grid: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for e in events.iter().filter(warp) {
        let pid = e["pid"].as_u64().unwrap_or(0);
        let (t0, d) = (
            e["ts"].as_f64().unwrap_or(0.0),
            e["dur"].as_f64().unwrap_or(0.0),
        );
        let row = grid.entry(pid).or_insert_with(|| vec![0.0; buckets]);
        // Spread the slice over the buckets it covers.
        let (mut t, end) = (t0, t0 + d);
        while t < end {
            let b = ((t / width) as usize).min(buckets - 1);
            let next = ((b + 1) as f64 * width).min(end).max(t + 1e-12);
            row[b] += next - t;
            t = next;
        }
    }
    if grid.is_empty() {
        return Err(VizError::Input("the timeline has no warp slices".into()));
    }
    Ok((grid.into_iter().collect(), span))
}

fn occupancy<DB: DrawingBackend>(
    trace: &Value,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), VizError> {
    let buckets = 200;
    let (grid, span) = occupancy_grid(trace, buckets)?;
    let width = span / buckets as f64;
    // Average live warps per bucket; the colour scale runs to the busiest bucket.
    let most = grid
        .iter()
        .flat_map(|(_, r)| r.iter().map(|v| v / width))
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let n = grid.len();
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("Live warps per SM over time (darkest: {most:.1} warps)"),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..span, 0usize..n)
        .map_err(draw_err)?;
    let names: Vec<String> = grid
        .iter()
        .map(|(pid, _)| format!("SM {}", pid - 1))
        .collect();
    let every = n.div_ceil(20).max(1);
    chart
        .configure_mesh()
        .disable_mesh()
        .y_labels(n.min(20))
        .y_label_formatter(&|i| {
            if i % every == 0 {
                names.get(*i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("time (µs)")
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(grid.iter().enumerate().flat_map(|(i, (_, row))| {
            row.iter().enumerate().map(move |(b, v)| {
                let a = (v / width / most).clamp(0.0, 1.0);
                Rectangle::new(
                    [(b as f64 * width, i), ((b + 1) as f64 * width, i + 1)],
                    BLUE.mix(a).filled(),
                )
            })
        }))
        .map_err(draw_err)?;
    Ok(())
}

fn simd<DB: DrawingBackend>(stats: &Value, root: &DrawingArea<DB, Shift>) -> Result<(), VizError> {
    let lanes: Vec<u64> = stats["simd_lanes"]
        .as_array()
        .ok_or_else(|| VizError::Input("stats JSON has no `simd_lanes`".into()))?
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    let max = lanes.iter().copied().max().unwrap_or(0).max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Issued warp instructions by active lanes",
            ("sans-serif", 24),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..lanes.len() as f64 - 0.5, 0u64..max + max / 10 + 1)
        .map_err(draw_err)?;
    // Integer ticks only: bar k is centred on k lanes.
    let ticks = lanes.len().min(17);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(ticks)
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
                format!("{}", v.round() as u64)
            } else {
                String::new()
            }
        })
        .x_desc("active lanes")
        .y_desc("warp instructions")
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(lanes.iter().enumerate().map(|(k, &n)| {
            let k = k as f64;
            Rectangle::new([(k - 0.4, 0), (k + 0.4, n)], BLUE.mix(0.7).filled())
        }))
        .map_err(draw_err)?;
    Ok(())
}

/// One control interval of the power chart: start and end (µs, launches laid end to end),
/// core clock (MHz) and average power (W, when the config has a power model).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerStep {
    pub start_us: f64,
    pub end_us: f64,
    pub mhz: f64,
    pub watts: Option<f64>,
}

/// The intervals of every launch's `clock.timeline`, one launch after the other, and the
/// highest power limit among them.
pub fn power_steps(stats: &Value) -> Result<(Vec<PowerStep>, Option<f64>), VizError> {
    let kernels = stats["kernels"]
        .as_array()
        .ok_or_else(|| VizError::Input("stats JSON has no `kernels`".into()))?;
    let mut steps = Vec::new();
    let mut offset = 0.0;
    let mut limit: Option<f64> = None;
    for k in kernels {
        let clock = &k["clock"];
        let timeline = clock["timeline"].as_array().ok_or_else(|| {
            VizError::Input(format!(
                "kernel `{}` has no `clock.timeline` (stats from an older gpusim?)",
                k["kernel"].as_str().unwrap_or("?")
            ))
        })?;
        for i in timeline {
            let mhz = i["mhz"].as_f64().unwrap_or(0.0);
            let start = offset + i["start_us"].as_f64().unwrap_or(0.0);
            let cycles = i["cycles"].as_f64().unwrap_or(0.0);
            let end = start + if mhz > 0.0 { cycles / mhz } else { 0.0 };
            steps.push(PowerStep {
                start_us: start,
                end_us: end,
                mhz,
                watts: i["watts"].as_f64(),
            });
        }
        offset += clock["seconds"].as_f64().unwrap_or(0.0) * 1e6;
        if let Some(l) = k["power"]["limit_watts"].as_f64() {
            limit = Some(limit.map_or(l, |m| m.max(l)));
        }
    }
    if steps.is_empty() {
        return Err(VizError::Input("no clock intervals to plot".into()));
    }
    Ok((steps, limit))
}

fn power<DB: DrawingBackend>(stats: &Value, root: &DrawingArea<DB, Shift>) -> Result<(), VizError> {
    let (steps, limit) = power_steps(stats)?;
    let end = steps.iter().map(|s| s.end_us).fold(0.0, f64::max).max(1e-3);
    let has_power = steps.iter().any(|s| s.watts.is_some());
    let (top, bottom) = if has_power {
        root.split_vertically(root.dim_in_pixel().1 / 2)
    } else {
        (root.clone(), root.clone())
    };
    // A step line: each interval's value held from its start to its end.
    let stairs = |f: &dyn Fn(&PowerStep) -> Option<f64>| -> Vec<(f64, f64)> {
        steps
            .iter()
            .filter_map(|s| f(s).map(|v| [(s.start_us, v), (s.end_us, v)]))
            .flatten()
            .collect()
    };
    if has_power {
        let watts = stairs(&|s| s.watts);
        let max = watts
            .iter()
            .map(|p| p.1)
            .fold(limit.unwrap_or(0.0), f64::max);
        let mut chart = ChartBuilder::on(&top)
            .caption(
                "Power and core clock over simulated time",
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..end, 0.0..max * 1.1 + 1.0)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .y_desc("power (W)")
            .draw()
            .map_err(draw_err)?;
        chart
            .draw_series(LineSeries::new(watts, RED.stroke_width(2)))
            .map_err(draw_err)?
            .label("interval average")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        if let Some(l) = limit {
            chart
                .draw_series(LineSeries::new(vec![(0.0, l), (end, l)], BLACK.mix(0.5)))
                .map_err(draw_err)?
                .label(format!("limit {l:.0} W"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(draw_err)?;
    }
    let clock = stairs(&|s| Some(s.mhz));
    let max = clock.iter().map(|p| p.1).fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..end, 0.0..max * 1.1 + 1.0)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (µs)")
        .y_desc("core clock (MHz)")
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(LineSeries::new(clock, BLUE.stroke_width(2)))
        .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        serde_json::json!({
            "simd_lanes": [0, 1, 0, 5],
            "kernels": [
                { "kernel": "a", "stalls": { "issued": 10, "barrier": 30 } },
                { "kernel": "b", "stalls": { "issued": 5, "barrier": 0 } }
            ]
        })
    }

    fn power_sample() -> Value {
        serde_json::json!({
            "kernels": [
                { "kernel": "a", "clock": { "seconds": 2e-6, "timeline": [
                    { "start_cycle": 0, "cycles": 2000, "start_us": 0.0, "mhz": 2000, "watts": 800.0 },
                    { "start_cycle": 2000, "cycles": 1500, "start_us": 1.0, "mhz": 1500, "watts": 690.0 } ] },
                  "power": { "limit_watts": 700.0 } },
                { "kernel": "b", "clock": { "seconds": 1e-6, "timeline": [
                    { "start_cycle": 0, "cycles": 1500, "start_us": 0.0, "mhz": 1500, "watts": 300.0 } ] } }
            ]
        })
    }

    /// Launches are laid end to end in simulated time; each interval ends after its cycles at
    /// its clock.
    #[test]
    fn power_steps_lay_launches_end_to_end() {
        let (steps, limit) = power_steps(&power_sample()).unwrap();
        assert_eq!(limit, Some(700.0));
        assert_eq!(steps.len(), 3);
        assert_eq!((steps[1].start_us, steps[1].end_us), (1.0, 2.0));
        assert_eq!(
            (steps[2].start_us, steps[2].end_us, steps[2].mhz),
            (2.0, 3.0, 1500.0)
        );
        assert!(power_steps(&serde_json::json!({ "kernels": [ { "kernel": "x" } ] })).is_err());
    }

    #[test]
    fn draws_the_power_chart() {
        let dir = std::env::temp_dir().join(format!("gpusim-viz-power-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("power.svg");
        plot(Chart::Power, &power_sample(), &svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains("<svg")
                && text.contains("power (W)")
                && text.contains("core clock (MHz)")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stall_table_reads_every_kernel() {
        let t = stall_table(&sample()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].1,
            vec![("barrier".to_string(), 30), ("issued".to_string(), 10)]
        );
    }

    #[test]
    fn draws_svg_and_png_with_text() {
        let dir = std::env::temp_dir().join(format!("gpusim-viz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (chart, name) in [(Chart::Stalls, "stalls"), (Chart::Simd, "simd")] {
            let svg = dir.join(format!("{name}.svg"));
            plot(chart, &sample(), &svg).unwrap();
            let text = std::fs::read_to_string(&svg).unwrap();
            assert!(
                text.contains("<svg") && text.contains("<rect"),
                "{name}: not an SVG chart"
            );
            let png = dir.join(format!("{name}.png"));
            plot(chart, &sample(), &png).unwrap();
            assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
        }
        assert!(plot(Chart::Simd, &sample(), &dir.join("x.gif")).is_err());
        assert!(plot(Chart::Stalls, &serde_json::json!({}), &dir.join("y.svg")).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    fn lines_sample() -> Value {
        serde_json::json!({ "kernels": [
            { "kernel": "k", "source": { "file": "k.ptx", "unattributed": {}, "lines": [
                { "line": 3, "text": "ld", "stalls": { "scoreboard_long": 90, "issued": 10 } },
                { "line": 4, "text": "add", "stalls": { "issued": 5 } } ] } },
            { "kernel": "k", "source": { "file": "k.ptx", "unattributed": {}, "lines": [
                { "line": 4, "text": "add", "stalls": { "issued": 500 } } ] } }
        ] })
    }

    /// Launches of one file are summed per line, hottest first.
    #[test]
    fn hottest_lines_sum_launches_and_sort() {
        let rows = hottest_lines(&lines_sample(), 10).unwrap();
        assert_eq!(
            rows[0],
            ("4: add".to_string(), vec![("issued".to_string(), 505)])
        );
        assert_eq!(rows[1].0, "3: ld");
        assert_eq!(hottest_lines(&lines_sample(), 1).unwrap().len(), 1);
        assert!(hottest_lines(&sample(), 5).is_err(), "no source view");
        let dir = std::env::temp_dir().join(format!("gpusim-viz-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        plot(Chart::Lines, &lines_sample(), &dir.join("l.svg")).unwrap();
        assert!(std::fs::read_to_string(dir.join("l.svg"))
            .unwrap()
            .contains("3: ld"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Every live warp slice's time lands in its SM's buckets; finished warps do not count.
    #[test]
    fn occupancy_spreads_live_warp_time_over_buckets() {
        let x = |pid: u64, ts: f64, dur: f64, name: &str| serde_json::json!({ "ph": "X", "cat": "warp", "pid": pid, "tid": 0, "ts": ts, "dur": dur, "name": name });
        let trace = serde_json::json!({ "traceEvents": [
            x(1, 0.0, 4.0, "issued"), x(1, 4.0, 4.0, "finished"), x(2, 1.0, 2.0, "barrier"),
            x(2, 1.0, 2.0, "issued")
        ] });
        let (grid, span) = occupancy_grid(&trace, 4).unwrap();
        assert_eq!(span, 8.0);
        let sum = |r: &Vec<f64>| r.iter().sum::<f64>();
        assert_eq!(grid.len(), 2);
        assert!((sum(&grid[0].1) - 4.0).abs() < 1e-9 && (grid[0].1[0] - 2.0).abs() < 1e-9);
        assert!((sum(&grid[1].1) - 4.0).abs() < 1e-9);
        assert!(
            occupancy_grid(&sample(), 4).is_err(),
            "a stats file is not a timeline"
        );
    }
}
