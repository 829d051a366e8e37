//! Progress on stderr: a bar with the scenario running and the time left,
//! redrawn at most twice a second (a redraw competes with the probe on a small
//! machine), hidden with `--quiet` or when stderr is not a terminal. Results
//! go to stdout through [`Progress::print`] so the bar never garbles them.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// Progress of a run, in seconds of scenario time.
pub struct Progress {
    bar: ProgressBar,
    scenario_s: u64,
    finished: u64,
    scenario_started: Instant,
}

impl Progress {
    /// A bar for `scenarios` measurements of `scenario` each.
    pub fn new(scenarios: usize, scenario: Duration, quiet: bool) -> Self {
        let scenario_s = scenario.as_secs().max(1);
        let total = scenarios as u64 * scenario_s;
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar =
                ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(2));
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
            scenario_s,
            finished: 0,
            scenario_started: Instant::now(),
        }
    }

    /// A scenario begins.
    pub fn start_scenario(&mut self, label: &str) {
        self.scenario_started = Instant::now();
        self.bar.set_message(label.to_string());
    }

    /// Moves the bar to where the running scenario is.
    pub fn tick(&self) {
        let within = self
            .scenario_started
            .elapsed()
            .as_secs()
            .min(self.scenario_s);
        self.bar
            .set_position(self.finished * self.scenario_s + within);
    }

    /// The running scenario is over.
    pub fn finish_scenario(&mut self) {
        self.skip(1);
    }

    /// `measurements` the bar counted on will not run (a scenario of
    /// `--precision` that was precise before its last allowed one).
    pub fn skip(&mut self, measurements: usize) {
        self.finished += measurements as u64;
        self.bar.set_position(self.finished * self.scenario_s);
    }

    /// Writes `text` to stdout without garbling the bar. A closed stdout
    /// (`| head`) is not an error: the run goes on and its file is written.
    pub fn print(&self, text: &str) {
        self.bar.suspend(|| {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        });
    }

    /// Writes a line to stderr without garbling the bar.
    pub fn warn(&self, text: &str) {
        self.bar.suspend(|| eprintln!("feelbench: {text}"));
    }
}

impl Drop for Progress {
    /// Removes the bar, however the run ends.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
