//! The live view, when stdout is a terminal: each canary's percentiles
//! over the last few seconds, the first canary's histogram since the
//! start, the last incidents and the cgroups that recur most among the
//! culprits, redrawn twice a second with ratatui (a well-kept crate for
//! terminal interfaces, over crossterm). `q`, Esc or Ctrl-C end the watch
//! (in the raw mode the terminal is in, Ctrl-C is a key, not SIGINT).

use super::canary::name_width;
use super::metrics::{Metrics, BUCKETS_S};
use crate::measure::latency::LatencyHistogram;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, List, Paragraph};
use ratatui::{DefaultTerminal, Frame};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How often the view is redrawn.
const REDRAW: Duration = Duration::from_millis(500);
/// The span the rolling percentiles cover.
const ROLLING: Duration = Duration::from_secs(5);
/// Incidents shown at most.
const INCIDENTS_SHOWN: usize = 12;

/// What the view shows besides the metrics.
pub struct View {
    /// Each canary's latencies in the current span, and the figures of the
    /// last finished one (p50, p99, max, events).
    spans: Vec<LatencyHistogram>,
    shown: Vec<Option<(f64, f64, f64, u64)>>,
    span_start: Instant,
    incidents: VecDeque<String>,
}

/// The terminal, in the live view until dropped.
pub struct Live {
    terminal: DefaultTerminal,
    view: View,
    drawn: Instant,
}

impl View {
    /// A view of `canaries` canaries.
    pub fn new(canaries: usize) -> Self {
        Self {
            spans: (0..canaries).map(|_| LatencyHistogram::new()).collect(),
            shown: vec![None; canaries],
            span_start: Instant::now(),
            incidents: VecDeque::new(),
        }
    }

    /// Counts an event of canary `canary` `latency_ns` late.
    pub fn record(&mut self, canary: usize, latency_ns: u64) {
        if self.span_start.elapsed() >= ROLLING {
            self.roll();
        }
        self.spans[canary].record_ns(latency_ns);
    }

    fn roll(&mut self) {
        for (span, shown) in self.spans.iter_mut().zip(&mut self.shown) {
            let ms = |ns: u64| ns as f64 / 1e6;
            *shown = (!span.is_empty()).then(|| {
                (
                    ms(span.quantile_ns(0.5)),
                    ms(span.quantile_ns(0.99)),
                    ms(span.max_ns()),
                    span.len(),
                )
            });
            *span = LatencyHistogram::new();
        }
        self.span_start = Instant::now();
    }

    /// Adds an incident's line.
    pub fn incident(&mut self, line: &str) {
        if self.incidents.len() == INCIDENTS_SHOWN {
            self.incidents.pop_back();
        }
        self.incidents.push_front(line.to_string());
    }

    /// Draws the view of `metrics` into `frame`.
    pub fn draw(&self, frame: &mut Frame, metrics: &Metrics) {
        let [top, middle, bottom] = Layout::vertical([
            Constraint::Length(metrics.canaries.len() as u16 + 3),
            Constraint::Length(10),
            Constraint::Min(4),
        ])
        .areas(frame.area());
        let width = name_width(metrics.canaries.iter().map(|c| c.name.as_str()));
        let mut rows = vec![format!(
            "{:<width$} {:>9} {:>9} {:>9} {:>7}   {:>10} {:>9}",
            "canary", "p50 ms", "p99 ms", "max ms", "events", "incidents", "dropped"
        )];
        for (counts, shown) in metrics.canaries.iter().zip(&self.shown) {
            let figures = match shown {
                Some((p50, p99, max, n)) => format!("{p50:>9.3} {p99:>9.3} {max:>9.3} {n:>7}"),
                None => format!("{:>9} {:>9} {:>9} {:>7}", "-", "-", "-", "-"),
            };
            rows.push(format!(
                "{:<width$} {figures}   {:>10} {:>9}",
                counts.name, counts.incidents, counts.dropped
            ));
        }
        let title = format!(
            " feelbench watch: the last {} s (q to quit); recorder {} ",
            ROLLING.as_secs(),
            metrics.recorder.state.key()
        );
        frame.render_widget(
            Paragraph::new(rows.join("\n")).block(Block::bordered().title(title)),
            top,
        );
        if let Some(first) = metrics.canaries.first() {
            let bars: Vec<Bar> = first
                .bucket_counts()
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let label = BUCKETS_S
                        .get(i)
                        .map_or("more".to_string(), |le| format!("{}", le * 1e3));
                    Bar::default()
                        .value(((n as f64 + 1.0).log10() * 100.0) as u64)
                        .text_value(n.to_string())
                        .label(label.into())
                })
                .collect();
            let chart = BarChart::default()
                .block(Block::bordered().title(format!(
                    " {}: events up to each bound, ms, since the start (log scale) ",
                    first.name
                )))
                .bar_width(5)
                .bar_gap(1)
                .data(BarGroup::default().bars(&bars));
            frame.render_widget(chart, middle);
        }
        let [incidents, culprits] =
            Layout::horizontal([Constraint::Percentage(70), Constraint::Percentage(30)])
                .areas(bottom);
        frame.render_widget(
            List::new(self.incidents.iter().map(String::as_str))
                .block(Block::bordered().title(" last incidents ")),
            incidents,
        );
        let top_culprits: Vec<String> = metrics
            .culprits()
            .into_iter()
            .map(|(group, n)| format!("{n:>6}  {group}"))
            .collect();
        frame.render_widget(
            List::new(top_culprits).block(Block::bordered().title(" culprits' cgroups ")),
            culprits,
        );
    }
}

impl Live {
    /// Puts the terminal in the live view of `canaries` canaries.
    pub fn start(canaries: usize) -> Self {
        Self {
            terminal: ratatui::init(),
            view: View::new(canaries),
            drawn: Instant::now() - REDRAW,
        }
    }

    /// The view, to count into.
    pub fn view(&mut self) -> &mut View {
        &mut self.view
    }

    /// Redraws when it is time; whether a quit key was pressed.
    pub fn tick(&mut self, metrics: &Metrics) -> bool {
        if self.drawn.elapsed() >= REDRAW {
            let view = &self.view;
            let _ = self.terminal.draw(|frame| view.draw(frame, metrics));
            self.drawn = Instant::now();
        }
        quit_pressed()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Whether `q`, Esc or Ctrl-C waits among the terminal's events.
fn quit_pressed() -> bool {
    while event::poll(Duration::ZERO).unwrap_or(false) {
        if let Ok(Event::Key(key)) = event::read() {
            let ctrl_c =
                key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
            if ctrl_c || matches!(key.code, KeyCode::Char('q') | KeyCode::Esc) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::metrics::RecorderState;
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    #[test]
    fn the_view_shows_percentiles_histogram_incidents_and_culprits() {
        let mut metrics = Metrics::new(&["timer", "frame"], 3, RecorderState::Off);
        let mut view = View::new(2);
        for ns in [50_000, 80_000, 3_000_000] {
            metrics.record(0, ns);
            view.record(0, ns);
        }
        view.roll();
        view.incident("12:00:00 timer 3.0 ms late");
        let mut terminal = Terminal::new(TestBackend::new(110, 30)).unwrap();
        terminal.draw(|frame| view.draw(frame, &metrics)).unwrap();
        let text: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|cell| cell.symbol())
            .collect();
        assert!(text.contains("recorder off"), "{text}");
        assert!(text.contains("timer"), "{text}");
        assert!(text.contains("3.000"), "the rolling max: {text}");
        assert!(text.contains("12:00:00 timer 3.0 ms late"), "{text}");
        assert!(text.contains("culprits' cgroups"), "{text}");
        assert!(text.contains("events up to each bound"), "{text}");
    }
}
