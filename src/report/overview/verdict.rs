//! The overview's words: each probe's one-line verdict, naming the worst
//! loads, and the summary line of geometric means.

use super::*;

/// Loads named in a verdict, at most this many per kind.
const NAMED: usize = 3;

impl ProbeOverview {
    /// The cells of the loads other than `none` that have figures.
    fn loaded(&self) -> impl Iterator<Item = (&Cell, &CellFigures)> {
        self.cells
            .iter()
            .filter(|c| c.load != REFERENCE)
            .filter_map(|c| Some((c, c.figures.as_ref()?)))
    }

    /// The loads whose scenario gave no figures.
    fn failed_loads(&self) -> Vec<&str> {
        self.cells
            .iter()
            .filter(|c| c.figures.is_none())
            .map(|c| c.load.as_str())
            .collect()
    }

    /// The one-line verdict: by the probe's rule of what its user notices
    /// where it has one ([`judged_verdict`](Self::judged_verdict)), else
    /// by ratios: `job: 3.1× slower under burn, 1.8× under hack; fine
    /// under read`.
    pub fn verdict(&self) -> String {
        if self.rule.is_some() {
            return self.judged_verdict();
        }
        let name = &self.probe;
        if !self.has_reference {
            return format!(
                "{name}: not measured under {REFERENCE}, so no ratios: values as measured"
            );
        }
        let mut worse: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.worse())
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        worse.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut low: Vec<(&Cell, f64)> = self
            .cells
            .iter()
            .filter_map(|c| Some((c, c.figures.as_ref().filter(|f| f.low_share())?.share?)))
            .collect();
        low.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut unclear: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.unclear())
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        unclear.sort_by(|a, b| b.1.total_cmp(&a.1));
        let fine: Vec<&str> = self
            .loaded()
            .filter(|(_, f)| f.band() == 0)
            .map(|(c, _)| c.load.as_str())
            .collect();
        let failed = self.failed_loads();
        let worse: Vec<(String, &str)> = worse
            .iter()
            .map(|(c, r)| (ratio_words(*r), c.load.as_str()))
            .collect();
        let low: Vec<(String, &str)> = low
            .iter()
            .map(|(c, share)| (share_words(*share), c.load.as_str()))
            .collect();
        let unclear: Vec<(String, &str)> = unclear
            .iter()
            .map(|(c, r)| (ratio_words(*r), c.load.as_str()))
            .collect();
        let mut parts = Vec::new();
        parts.extend(listed(&worse, &self.worse));
        if let Some(label) = &self.share {
            parts.extend(listed(&low, share_name(label)));
        }
        parts.extend(
            listed(&unclear, &self.worse).map(|text| format!("{text} within the noise (°)")),
        );
        let loaded = self.cells.iter().any(|c| c.load != REFERENCE);
        match (parts.is_empty(), loaded, failed.is_empty()) {
            (true, false, true) => return format!("{name}: measured under {REFERENCE} only"),
            (true, true, true) => return format!("{name}: fine under every load"),
            _ => {}
        }
        if !fine.is_empty() && !parts.is_empty() {
            parts.push(format!("fine under {}", fine.join(", ")));
        }
        if !failed.is_empty() {
            parts.push(format!("failed under {}", failed.join(", ")));
        }
        format!("{name}: {}", parts.join("; "))
    }

    /// The verdict by the probe's rule: `audio: poor under hack (deadlines
    /// met % 85.0, 3.1× later); noticed under read (deadlines met % 99.5,
    /// 1.2× later); 25× later under burn, not noticed; fine under write`. Every load is
    /// judged, `none` too (its user notices there as well), and needs no
    /// `none` to be judged; the ratio is said beside where there is one.
    fn judged_verdict(&self) -> String {
        let name = &self.probe;
        let figure = self.rule.as_ref().map_or("", |r| r.figure.as_str());
        let judged = |notice: Notice| -> Vec<(String, &str)> {
            let mut cells: Vec<(&Cell, &CellFigures)> = self
                .cells
                .iter()
                .filter_map(|c| Some((c, c.figures.as_ref()?)))
                .filter(|(_, f)| f.notice == Some(notice))
                .collect();
            cells.sort_by(|a, b| {
                b.1.ratio
                    .unwrap_or(0.0)
                    .total_cmp(&a.1.ratio.unwrap_or(0.0))
            });
            cells
                .into_iter()
                .map(|(c, f)| {
                    let mark = if f.clear { "" } else { "°" };
                    let ratio = f
                        .ratio
                        .filter(|_| c.load != REFERENCE)
                        .map(|r| format!(", {}{mark} {}", ratio_words(r), self.worse));
                    let judged = f.judged.as_deref().unwrap_or_default();
                    let text = format!("({figure} {judged}{})", ratio.unwrap_or_default());
                    (text, c.load.as_str())
                })
                .collect()
        };
        let mut parts = Vec::new();
        for (notice, words) in [(Notice::Poor, "poor"), (Notice::Noticed, "noticed")] {
            let items: Vec<String> = judged(notice)
                .iter()
                .take(NAMED)
                .map(|(value, load)| format!("{load} {value}"))
                .collect();
            let more = judged(notice).len().saturating_sub(NAMED);
            if !items.is_empty() {
                let more = (more > 0).then(|| format!(" and {more} more"));
                parts.push(format!(
                    "{words} under {}{}",
                    items.join(", "),
                    more.unwrap_or_default()
                ));
            }
        }
        let mut unnoticed: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.notice == Some(Notice::Unnoticed) && f.band() > 0)
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        unnoticed.sort_by(|a, b| b.1.total_cmp(&a.1));
        let unnoticed: Vec<(String, &str)> = unnoticed
            .iter()
            .map(|(c, r)| {
                let mark = if c.figures.as_ref().is_some_and(|f| f.clear) {
                    ""
                } else {
                    "°"
                };
                (format!("{}{mark}", ratio_words(*r)), c.load.as_str())
            })
            .collect();
        parts.extend(listed(&unnoticed, &self.worse).map(|text| format!("{text}, not noticed")));
        let unjudged: Vec<&str> = self
            .cells
            .iter()
            .filter(|c| c.figures.as_ref().is_some_and(|f| f.notice.is_none()))
            .map(|c| c.load.as_str())
            .collect();
        let fine: Vec<&str> = self
            .loaded()
            .filter(|(_, f)| f.notice.is_some() && f.band() == 0)
            .map(|(c, _)| c.load.as_str())
            .collect();
        let failed = self.failed_loads();
        let loaded = self.cells.iter().any(|c| c.load != REFERENCE);
        if !unjudged.is_empty() {
            parts.push(format!(
                "not judged under {} (no {figure})",
                unjudged.join(", ")
            ));
        }
        match (parts.is_empty(), loaded, failed.is_empty()) {
            (true, false, true) => {
                return format!("{name}: fine under {REFERENCE}, measured only there")
            }
            (true, true, true) => return format!("{name}: fine under every load"),
            _ => {}
        }
        if !fine.is_empty() {
            parts.push(format!("fine under {}", fine.join(", ")));
        }
        if !failed.is_empty() {
            parts.push(format!("failed under {}", failed.join(", ")));
        }
        format!("{name}: {}", parts.join("; "))
    }

    /// The geometric mean of its ratios over the loads other than `none`.
    pub fn mean_ratio(&self) -> Option<f64> {
        geometric_mean(self.loaded().filter_map(|(_, f)| f.ratio))
    }
}

/// `38× later under hack, 24× under burn and 2 more`: the first
/// [`NAMED`] of `items` (a value and its load, worst first), the first
/// with `what`; `None` when there are none.
fn listed(items: &[(String, &str)], what: &str) -> Option<String> {
    let named: Vec<String> = items
        .iter()
        .take(NAMED)
        .enumerate()
        .map(|(i, (value, load))| match i {
            0 => format!("{value} {what} under {load}"),
            _ => format!("{value} under {load}"),
        })
        .collect();
    let more = match items.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    (!named.is_empty()).then(|| named.join(", ") + &more)
}

impl Overview {
    /// The summary line: the geometric mean of every ratio to `none`, per
    /// probe and over all, naming the run's suite when it has one; `None`
    /// when no probe has a ratio.
    pub fn summary(&self) -> Option<String> {
        let all = geometric_mean(
            self.probes
                .iter()
                .flat_map(|p| p.loaded().filter_map(|(_, f)| f.ratio)),
        )?;
        let per_probe: Vec<String> = self
            .probes
            .iter()
            .filter_map(|p| Some(format!("{} {}", p.probe, ratio_text(p.mean_ratio()?))))
            .collect();
        let subject = match &self.suite {
            Some(suite) => format!("suite {suite}"),
            None => "the run".to_string(),
        };
        Some(format!(
            "geometric mean of the ratios to {REFERENCE}, {subject}: {} ({}); the figures per scenario are above",
            ratio_text(all),
            per_probe.join(", ")
        ))
    }
}
