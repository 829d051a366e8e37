//! Charts as SVG text, drawn with plotters' SVG backend from plain numbers
//! (lines of points, values with intervals). Knows no run, probe or load:
//! the callers name the series. Plotters escapes every text it writes.

use anyhow::{anyhow, Result};
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// Size of every chart, in pixels.
const SIZE: (u32, u32) = (540, 330);

/// One named series of points `(x, y)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The name in the legend.
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A named value with its interval (`low == high == value` when it has none).
#[derive(Debug, Clone, PartialEq)]
pub struct Ranged {
    /// The name under its mark.
    pub name: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// The texts of a chart.
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

/// OSADL's latency plot, on log scales both ways: x the latency (the
/// middle of each log-spaced bin), y how many samples fell in each bin,
/// one line per series.
pub fn histogram(labels: Labels, lines: &[Line]) -> Result<String> {
    let (x, y) = bounds(lines);
    let top = (y.1 * 2.0).max(10.0);
    draw_lines(labels, latency_axis(x), log_axis(0.5, top), lines, None)
}

/// Cumulative distributions: x the latency on a log scale, y the share of
/// samples at or below it.
pub fn cdf(labels: Labels, lines: &[Line]) -> Result<String> {
    let (x, _) = bounds(lines);
    draw_lines(labels, latency_axis(x), 0.0..1.0, lines, None)
}

/// A log latency axis around latencies from `x.0` to `x.1`, at least a
/// decade wide.
fn latency_axis(x: (f64, f64)) -> WithKeyPoints<LogCoord<f64>> {
    let low = x.0.max(1e-6) / 1.2;
    let high = (x.1 * 1.2).max(low * 10.0);
    log_axis(low, high)
}

/// Values over time, with a dashed-free horizontal line at `ideal`.
pub fn over_time(labels: Labels, lines: &[Line], ideal: Option<f64>) -> Result<String> {
    let (x, y) = bounds(lines);
    let top = y.1.max(ideal.unwrap_or(0.0)) * 1.1;
    draw_lines(
        labels,
        x.0..x.1.max(x.0 + 1e-3),
        0.0..top.max(1e-3),
        lines,
        ideal,
    )
}

/// The y axis that holds every `(low, value, high)` and 0, with a tenth
/// of room above.
fn y_span(values: impl Iterator<Item = (f64, f64, f64)>) -> std::ops::Range<f64> {
    let (bottom, top) = values.fold((0.0_f64, 0.0_f64), |(bottom, top), (low, value, high)| {
        (bottom.min(low.min(value)), top.max(high.max(value)))
    });
    bottom..(top * 1.1).max(1e-3)
}

/// Values side by side, each with its interval as an error bar.
pub fn intervals(labels: Labels, values: &[Ranged]) -> Result<String> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(drawing)?;
        let names: Vec<String> = values.iter().map(|v| v.name.clone()).collect();
        let y = y_span(values.iter().map(|v| (v.low, v.value, v.high)));
        let mut chart = categories(&area, labels, &names, y)?;
        for (i, v) in values.iter().enumerate() {
            let colour = Palette99::pick(i).stroke_width(2);
            let x = i as f64;
            chart
                .draw_series([ErrorBar::new_vertical(
                    x, v.low, v.value, v.high, colour, 12,
                )])
                .map_err(drawing)?;
            chart
                .draw_series([Circle::new((x, v.value), 4, colour.filled())])
                .map_err(drawing)?;
        }
        area.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// A value with its interval at a place on a trend's x axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// A vertical line across a trend at `x`, with its note.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub note: String,
}

/// What a trend's x axis is.
#[derive(Debug, Clone, Copy)]
pub enum TrendAxis<'a> {
    /// Seconds since the epoch, labelled with dates.
    Time,
    /// One place per name, at 0, 1, 2, ...
    Names(&'a [String]),
}

/// Values along x joined by a line, each with its interval as an error
/// bar, and a vertical line with its note at each mark.
pub fn trend(labels: Labels, values: &[Placed], marks: &[Mark], axis: TrendAxis) -> Result<String> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(drawing)?;
        let y = y_span(values.iter().map(|v| (v.low, v.value, v.high)));
        let (x, ticks) = match axis {
            TrendAxis::Names(names) => (-0.5..names.len().max(1) as f64 - 0.5, names.len() * 2 + 1),
            TrendAxis::Time => {
                let xs = values.iter().map(|v| v.x);
                let (low, high) = xs.fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
                let pad = ((high - low) * 0.05).max(60.0);
                match low <= high {
                    true => (low - pad..high + pad, 5),
                    false => (0.0..1.0, 5),
                }
            }
        };
        let name_of = |x: &f64| match axis {
            TrendAxis::Names(names) => {
                let i = x.round();
                match (i - x).abs() < 1e-6 && i >= 0.0 {
                    true => names.get(i as usize).cloned().unwrap_or_default(),
                    false => String::new(),
                }
            }
            TrendAxis::Time => date_label(*x),
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(labels.title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(60)
            .build_cartesian_2d(x, y.clone())
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(ticks)
            .x_label_formatter(&name_of)
            .y_label_formatter(&tick_label)
            .x_desc(labels.x)
            .y_desc(labels.y)
            .draw()
            .map_err(drawing)?;
        let colour = Palette99::pick(0).stroke_width(2);
        chart
            .draw_series(LineSeries::new(
                values.iter().map(|v| (v.x, v.value)),
                colour,
            ))
            .map_err(drawing)?;
        chart
            .draw_series(
                values
                    .iter()
                    .map(|v| ErrorBar::new_vertical(v.x, v.low, v.value, v.high, colour, 8)),
            )
            .map_err(drawing)?;
        chart
            .draw_series(
                values
                    .iter()
                    .map(|v| Circle::new((v.x, v.value), 3, colour.filled())),
            )
            .map_err(drawing)?;
        for mark in marks {
            let line = [(mark.x, y.start), (mark.x, y.end)];
            chart
                .draw_series([PathElement::new(line, BLACK.stroke_width(1))])
                .map_err(drawing)?;
            chart
                .draw_series([Text::new(
                    mark.note.clone(),
                    (mark.x, y.end),
                    ("sans-serif", 11),
                )])
                .map_err(drawing)?;
        }
        area.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Seconds since the epoch as `11-27 08:11` (UTC; short enough for five
/// ticks side by side).
fn date_label(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return String::new();
    }
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds as u64);
    let text = humantime::format_rfc3339_seconds(time).to_string();
    text.get(5..16).unwrap_or(&text).replace('T', " ")
}

/// A chart on `area` with one place on the x axis per name of `names`
/// (labelled with it) and `y` up the side, its mesh drawn.
fn categories<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    labels: Labels,
    names: &[String],
    y: std::ops::Range<f64>,
) -> Result<
    ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
> {
    let n = names.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(labels.title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, y)
        .map_err(drawing)?;
    let name_of = |x: &f64| {
        let i = x.round();
        match (i - x).abs() < 1e-6 && i >= 0.0 {
            true => names.get(i as usize).cloned(),
            false => None,
        }
        .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&name_of)
        .y_label_formatter(&tick_label)
        .y_desc(labels.y)
        .x_desc(labels.x)
        .draw()
        .map_err(drawing)?;
    Ok(chart)
}

/// One layer of stacked bars: its name in the legend and its height in
/// each bar, bottom layer first.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub name: String,
    pub values: Vec<f64>,
}

/// A bar per name in `bars`, each the stack of the `layers`' values for it
/// (a layer with nothing in any bar is left out of the legend).
pub fn stacked_bars(labels: Labels, bars: &[String], layers: &[Layer]) -> Result<String> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(drawing)?;
        let height = |bar: usize| -> f64 {
            layers
                .iter()
                .filter_map(|l| l.values.get(bar))
                .map(|v| v.max(0.0))
                .sum()
        };
        let top = (0..bars.len()).map(height).fold(0.0_f64, f64::max);
        let mut chart = categories(&area, labels, bars, 0.0..(top * 1.1).max(1e-3))?;
        let mut base = vec![0.0; bars.len()];
        for (i, layer) in layers.iter().enumerate() {
            let colour = Palette99::pick(i).filled();
            let boxes: Vec<Rectangle<(f64, f64)>> = base
                .iter_mut()
                .zip(&layer.values)
                .enumerate()
                .filter(|(_, (_, v))| **v > 0.0)
                .map(|(bar, (below, v))| {
                    let x = bar as f64;
                    let from = *below;
                    *below += v;
                    Rectangle::new([(x - 0.3, from), (x + 0.3, *below)], colour)
                })
                .collect();
            if boxes.is_empty() {
                continue;
            }
            chart
                .draw_series(boxes)
                .map_err(drawing)?
                .label(layer.name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(drawing)?;
        area.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// A log axis from `low` to `high` (both above 0) labelled at 1, 2 and 5
/// times each power of ten, or at the powers alone when those would crowd
/// it, with a light line at every other whole multiple.
fn log_axis(low: f64, high: f64) -> WithKeyPoints<LogCoord<f64>> {
    let decades = (low.log10().floor() as i32)..=(high.log10().ceil() as i32);
    let multiples = |of: &[f64]| -> Vec<f64> {
        decades
            .clone()
            .flat_map(|d| of.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|v| (low..=high).contains(v))
            .collect()
    };
    let mut bold = multiples(&[1.0, 2.0, 5.0]);
    if bold.len() > MAX_LOG_LABELS {
        bold = multiples(&[1.0]);
    }
    let light = multiples(&[3.0, 4.0, 6.0, 7.0, 8.0, 9.0]);
    (low..high)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Most labels on a log axis before only the powers of ten are labelled.
const MAX_LOG_LABELS: usize = 8;

/// A tick's label: the value to three significant digits, without
/// trailing zeros (`0.02`, `1`, `2.5`, `1000`).
fn tick_label(value: &f64) -> String {
    if *value == 0.0 || !value.is_finite() {
        return "0".to_string();
    }
    let digits = 2 - value.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    let rounded = (value * scale).round() / scale;
    format!("{rounded}")
}

/// The smallest and largest x and y of `lines`, `(0, 0)` when they are empty.
fn bounds(lines: &[Line]) -> ((f64, f64), (f64, f64)) {
    let points = || lines.iter().flat_map(|l| l.points.iter());
    let range = |values: Vec<f64>| match values.is_empty() {
        true => (0.0, 0.0),
        false => values
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v))),
    };
    (
        range(points().map(|p| p.0).collect()),
        range(points().map(|p| p.1).collect()),
    )
}

/// `lines` on axes `x` and `y` (linear or log), with their legend and a
/// horizontal line at `ideal`.
fn draw_lines<X, Y>(
    labels: Labels,
    x: X,
    y: Y,
    lines: &[Line],
    ideal: Option<f64>,
) -> Result<String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(drawing)?;
        let mut chart = ChartBuilder::on(&area)
            .caption(labels.title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x, y)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_label_formatter(&tick_label)
            .y_label_formatter(&tick_label)
            .x_desc(labels.x)
            .y_desc(labels.y)
            .draw()
            .map_err(drawing)?;
        for (i, line) in lines.iter().enumerate() {
            let colour = Palette99::pick(i);
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(drawing)?
                .label(line.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
                });
        }
        if let Some(ideal) = ideal {
            let (from, to) = (chart.x_range().start, chart.x_range().end);
            chart
                .draw_series(LineSeries::new(
                    [(from, ideal), (to, ideal)],
                    BLACK.stroke_width(1),
                ))
                .map_err(drawing)?
                .label("ideal")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(drawing)?;
        area.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// A plotters error as ours (drawing into a string fails only on a bug).
fn drawing<E: std::error::Error + Send + Sync>(error: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("could not draw a chart: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(title: &str) -> Labels<'_> {
        Labels {
            title,
            x: "latency (ms)",
            y: "samples",
        }
    }

    fn line(name: &str) -> Line {
        Line {
            name: name.into(),
            points: vec![(0.1, 1.0), (1.0, 100.0), (5.0, 3.0)],
        }
    }

    #[test]
    fn every_line_is_a_path_with_its_name_escaped() {
        let svg = histogram(
            labels("<b>t</b>"),
            &[line("none"), line("<script>x</script>")],
        )
        .unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(!svg.contains("<script>"));
        assert!(!svg.contains("<b>"));
        assert!(svg.matches("<polyline").count() >= 2);
    }

    #[test]
    fn empty_and_single_point_charts_have_finite_axes_and_their_legend() {
        let text = |svg: &str, t: &str| svg.contains(&format!(">\n{t}\n</text>"));
        let finite = |svg: &str| !svg.contains("NaN") && !svg.contains("inf\n</text>");
        for (lines, legend) in [
            (vec![], false),
            (
                vec![Line {
                    name: "a".into(),
                    points: vec![(2.0, 1.0)],
                }],
                true,
            ),
        ] {
            for (title, svg) in [
                ("h", histogram(labels("h"), &lines)),
                ("c", cdf(labels("c"), &lines)),
                ("t", over_time(labels("t"), &lines, Some(1.0))),
            ] {
                let svg = svg.unwrap();
                assert!(text(&svg, title) && text(&svg, "latency (ms)"), "{svg}");
                assert!(finite(&svg), "{svg}");
                assert_eq!(text(&svg, "a"), legend, "{svg}");
            }
        }
        let svg = intervals(labels("i"), &[]).unwrap();
        assert!(text(&svg, "i") && finite(&svg), "{svg}");
    }

    #[test]
    fn log_axes_are_labelled_at_round_values_without_crowding() {
        let labels = |low, high| -> Vec<String> {
            log_axis(low, high)
                .bold_points()
                .iter()
                .map(tick_label)
                .collect()
        };
        assert_eq!(labels(0.08, 6.0), ["0.1", "0.2", "0.5", "1", "2", "5"]);
        assert_eq!(labels(0.5, 40_000.0), ["1", "10", "100", "1000", "10000"]);
        assert_eq!(tick_label(&0.30000000000000004), "0.3");
        assert_eq!(tick_label(&1234.5), "1230");
        assert_eq!(tick_label(&0.0), "0");
    }

    #[test]
    fn stacked_bars_draw_a_box_per_part_with_time_and_a_legend_entry_per_layer() {
        let layer = |name: &str, values: Vec<f64>| Layer {
            name: name.into(),
            values,
        };
        let bars = ["none".to_string(), "<burn>".to_string()];
        let layers = [
            layer("timer", vec![0.5, 1.0]),
            layer("run queue", vec![0.0, 30.0]),
            layer("blocked", vec![0.0, 0.0]),
        ];
        let svg = stacked_bars(labels("late"), &bars, &layers).unwrap();
        // The background, three boxes, the legend's box and border and
        // its two marks.
        assert_eq!(svg.matches("<rect").count(), 1 + 3 + 2 + 2, "{svg}");
        assert!(svg.contains("\nrun queue\n") && !svg.contains("\nblocked\n"));
        assert!(svg.contains("&lt;burn&gt;") && !svg.contains("<burn>"));
        let empty = stacked_bars(labels("e"), &[], &[]).unwrap();
        assert!(!empty.contains("NaN"), "{empty}");
    }

    #[test]
    fn a_trend_draws_each_value_and_each_mark_with_its_note() {
        let placed = |x: f64| Placed {
            x,
            value: 5.0,
            low: 4.0,
            high: 6.0,
        };
        let marks = [Mark {
            x: 1_800_000_060.0,
            note: "<BIOS> update".into(),
        }];
        let values = [placed(1_800_000_000.0), placed(1_800_000_120.0)];
        let svg = trend(labels("t"), &values, &marks, TrendAxis::Time).unwrap();
        assert!(svg.matches("<circle").count() >= 2, "{svg}");
        assert!(svg.contains("&lt;BIOS&gt; update") && !svg.contains("<BIOS>"));
        assert!(svg.contains("01-15 08:01"), "{svg}");
        let names = ["6.1".to_string(), "6.12".to_string()];
        let svg = trend(labels("k"), &values[..0], &[], TrendAxis::Names(&names)).unwrap();
        assert!(svg.contains("\n6.12\n") && !svg.contains("NaN"), "{svg}");
    }

    #[test]
    fn intervals_draw_a_mark_per_value() {
        let value = |name: &str| Ranged {
            name: name.into(),
            value: 90.0,
            low: 85.0,
            high: 95.0,
        };
        let svg = intervals(labels("deadlines"), &[value("none"), value("burn")]).unwrap();
        assert!(svg.matches("<circle").count() >= 2);
        assert!(svg.contains("\nburn\n"));
    }
}
