//! Progress on stderr: a bar with the scenario running and the time left,
//! redrawn at most twice a second (a redraw competes with the probe on a small
//! machine), hidden with `--quiet` or when stderr is not a terminal. Lines
//! on stderr (warnings, each finished scenario's figures) and the results
//! on stdout go through [`Progress::say`] and [`Progress::print`] so the bar
//! never garbles them.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// Progress of a run, in seconds of scenario time.
pub struct Progress {
    bar: ProgressBar,
    /// Seconds of the measurements done or skipped.
    finished_s: u64,
    /// Expected seconds of the running measurement.
    running_s: u64,
    scenario_started: Instant,
}

impl Progress {
    /// A bar for measurements expected to take `total` together.
    pub fn new(total: Duration, quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(
                Some(total.as_secs().max(1)),
                ProgressDrawTarget::stderr_with_hz(2),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "[{elapsed_precise}] {bar:30} {pos}/{len} s  ETA {eta}  {msg}",
                )
                .expect("constant template is valid"),
            );
            bar
        };
        Self {
            bar,
            finished_s: 0,
            running_s: 0,
            scenario_started: Instant::now(),
        }
    }

    /// A measurement expected to take `expected` begins.
    pub fn start_scenario(&mut self, label: &str, expected: Duration) {
        self.scenario_started = Instant::now();
        self.running_s = expected.as_secs();
        self.bar.set_message(label.to_string());
    }

    /// Moves the bar to where the running measurement is.
    pub fn tick(&self) {
        let within = self
            .scenario_started
            .elapsed()
            .as_secs()
            .min(self.running_s);
        self.bar.set_position(self.finished_s + within);
    }

    /// The running measurement is over.
    pub fn finish_scenario(&mut self) {
        self.skip(Duration::from_secs(self.running_s));
        self.running_s = 0;
    }

    /// Measurements the bar counted on, expected to take `expected`
    /// together, will not run (a scenario of `--precision` that was
    /// precise before its last allowed one).
    pub fn skip(&mut self, expected: Duration) {
        self.finished_s += expected.as_secs();
        self.bar.set_position(self.finished_s);
    }

    /// Writes `text` to stdout without garbling the bar. A closed stdout
    /// (`| head`) is not an error: the run goes on and its file is written.
    pub fn print(&self, text: &str) {
        self.bar.suspend(|| {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        });
    }

    /// Writes a line to stderr without garbling the bar: a warning, or a
    /// finished scenario's figures (seen with or without a terminal).
    pub fn say(&self, text: &str) {
        self.bar.suspend(|| say!("{text}"));
    }
}

impl Drop for Progress {
    /// Removes the bar, however the run ends.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A bar counting `total` items (`runs`) of work that is not measuring
/// (importing, sending), hidden when stderr is not a terminal or there is
/// only one item.
pub fn counting(total: usize, unit: &str) -> ProgressBar {
    if total < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar =
        ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "[{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit}  ETA {{eta}}"
        ))
        .expect("the template is valid"),
    );
    bar
}
