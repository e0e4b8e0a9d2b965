//! Progress on stderr for long runs (`--progress auto|bar|plain|none`): a bar on a terminal, a
//! plain line every `PLAIN_EVERY` elsewhere (`auto` picks by whether stderr is a terminal),
//! shown only once a task has run for `QUIET_FOR`, so short runs and tests stay silent.
//!
//! A launch reports cycles, warp instructions, CTAs done and, once some CTA has finished, an
//! ETA from the fraction of CTAs done; `gpusim check` and `gpusim fuzz` report runs or cases
//! done (`Counter`), and while such a counter is open the launches inside it only keep its
//! line alive. The mode is process-wide (`set_mode`, by the binary; nothing is shown until it
//! is set): it is display only and never changes a result. The simulator polls `Progress`
//! every few thousand cycles, so the hot path pays nothing per cycle.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// A bar when stderr is a terminal, plain lines otherwise.
    #[default]
    Auto,
    /// A bar (redrawn in place).
    Bar,
    /// A line every `PLAIN_EVERY`.
    Plain,
    /// Nothing.
    None,
}

/// Nothing is shown for a task shorter than this.
pub const QUIET_FOR: Duration = Duration::from_secs(2);
/// Plain lines come this often.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The process-wide mode (`Mode as u8`); `None` until the binary sets it.
static MODE: AtomicU8 = AtomicU8::new(Mode::None as u8);

/// Set how progress is shown for the rest of the process (the binary's `--progress`).
pub fn set_mode(m: Mode) {
    MODE.store(m as u8, Ordering::Relaxed);
}

/// The display actually used: `Auto` resolved against stderr, `None` if nothing is shown.
fn style() -> Option<Style> {
    match MODE.load(Ordering::Relaxed) {
        x if x == Mode::Bar as u8 => Some(Style::Bar),
        x if x == Mode::Plain as u8 => Some(Style::Plain),
        x if x == Mode::Auto as u8 => Some(if std::io::stderr().is_terminal() {
            Style::Bar
        } else {
            Style::Plain
        }),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Bar,
    Plain,
}

/// One thing to show: a label, a position out of a total, and a message.
struct View<'a> {
    label: &'a str,
    unit: &'a str,
    done: u64,
    total: u64,
    message: String,
}

/// A bar or a series of plain lines for one task, quiet for its first `QUIET_FOR`.
struct Display {
    style: Style,
    started: Instant,
    last_line: Option<Instant>,
    bar: Option<ProgressBar>,
}

impl Display {
    fn new(style: Style) -> Display {
        Display {
            style,
            started: Instant::now(),
            last_line: None,
            bar: None,
        }
    }

    fn show(&mut self, v: View) {
        let now = Instant::now();
        match self.style {
            Style::Bar if now - self.started >= QUIET_FOR => {
                let bar = self.bar.get_or_insert_with(|| {
                    let b = ProgressBar::new(v.total);
                    b.set_style(
                        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    b.set_prefix(v.label.to_string());
                    b
                });
                bar.set_length(v.total);
                bar.set_position(v.done);
                bar.set_message(format!("{}  {}", v.unit, v.message));
            }
            Style::Bar => {}
            Style::Plain => {
                if self.line_due(now) {
                    // A closed stderr is ignored: progress is not worth a failure.
                    let line = plain_line(&v, now - self.started);
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
            }
        }
    }

    /// Whether a plain line is due at `now` (and, if so, that it is written now): the first
    /// after `QUIET_FOR`, then one every `PLAIN_EVERY`.
    fn line_due(&mut self, now: Instant) -> bool {
        let due = now - self.started >= QUIET_FOR
            && self.last_line.is_none_or(|t| now - t >= PLAIN_EVERY);
        if due {
            self.last_line = Some(now);
        }
        due
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// One plain progress line.
fn plain_line(v: &View, elapsed: Duration) -> String {
    format!(
        "gpusim: {}: {}/{} {}, {}, {} elapsed",
        v.label,
        v.done,
        v.total,
        v.unit,
        v.message,
        seconds(elapsed)
    )
}

/// `12 s`, `4 min 05 s`, `2 h 03 min`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// `1234`, `12.3k`, `4.56M`, `7.89G`.
fn count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.2}M", n as f64 / 1e6),
        _ => format!("{:.2}G", n as f64 / 1e9),
    }
}

/// The time left at the rate so far: `done` of `total` took `elapsed`.
fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    (done > 0 && done < total).then(|| elapsed.mul_f64((total - done) as f64 / done as f64))
}

/// The open `Counter` (check runs, fuzz cases), which launches inside it keep alive.
static OUTER: Mutex<Option<Outer>> = Mutex::new(None);

struct Outer {
    label: String,
    unit: String,
    done: u64,
    total: u64,
    display: Display,
}

impl Outer {
    fn show(&mut self) {
        let elapsed = self.display.started.elapsed();
        let message = match eta(elapsed, self.done, self.total) {
            Some(t) => format!("ETA {}", seconds(t)),
            None if self.done >= self.total => "finishing".into(),
            None => "ETA unknown".into(),
        };
        let (label, unit) = (self.label.clone(), self.unit.clone());
        self.display.show(View {
            label: &label,
            unit: &unit,
            done: self.done,
            total: self.total,
            message,
        });
    }
}

fn outer() -> std::sync::MutexGuard<'static, Option<Outer>> {
    OUTER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Progress of a task made of `total` steps (`gpusim check`'s runs, `gpusim fuzz`'s cases).
/// Closed when dropped. A counter opened while another is open (a check inside a fuzz case)
/// shows nothing.
pub struct Counter {
    owner: bool,
}

impl Counter {
    pub fn new(label: &str, unit: &str, total: u64) -> Counter {
        let Some(style) = style() else {
            return Counter { owner: false };
        };
        let mut o = outer();
        if o.is_some() {
            return Counter { owner: false };
        }
        *o = Some(Outer {
            label: label.to_string(),
            unit: unit.to_string(),
            done: 0,
            total,
            display: Display::new(style),
        });
        Counter { owner: true }
    }

    /// `done` steps are complete.
    pub fn set(&self, done: u64) {
        if !self.owner {
            return;
        }
        if let Some(o) = outer().as_mut() {
            o.done = done;
            o.show();
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if self.owner {
            if let Some(mut o) = outer().take() {
                o.display.finish();
            }
        }
    }
}

/// What a launch has done so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchState {
    pub cycle: u64,
    pub warp_instructions: u64,
    pub ctas_done: u64,
    pub ctas: u64,
    /// The cycle at which the watchdog stops the launch (`watchdog_cycles`).
    pub watchdog: u64,
}

/// One launch's progress (polled by `core::gpu` every few thousand cycles).
pub struct Progress {
    display: Option<Display>,
    /// Inside a `Counter`: keep its line alive instead of showing the launch.
    nested: bool,
}

impl Progress {
    /// Progress for a launch; `enabled` is the caller's wish (`RunOptions::progress`), the
    /// process-wide mode decides how (or whether) it shows.
    pub fn new(enabled: bool) -> Progress {
        let style = style().filter(|_| enabled);
        let nested = style.is_some() && outer().is_some();
        Progress {
            display: style.filter(|_| !nested).map(Display::new),
            nested,
        }
    }

    /// Whether `update` shows anything (the caller may skip gathering the state).
    pub fn active(&self) -> bool {
        self.display.is_some() || self.nested
    }

    pub fn update(&mut self, kernel: &str, s: LaunchState) {
        if self.nested {
            if let Some(o) = outer().as_mut() {
                o.show();
            }
            return;
        }
        let Some(d) = self.display.as_mut() else {
            return;
        };
        let elapsed = d.started.elapsed();
        let rate = s.warp_instructions as f64 / elapsed.as_secs_f64().max(1e-3);
        let eta = match eta(elapsed, s.ctas_done, s.ctas) {
            Some(t) => format!("ETA {}", seconds(t)),
            // No CTA has finished (a single wave): nothing to extrapolate from yet but the
            // watchdog, at the cycle rate so far.
            None => match eta(elapsed, s.cycle, s.watchdog) {
                Some(t) => format!(
                    "ETA unknown until a CTA finishes; the watchdog (cycle {}) stops it within {}",
                    count(s.watchdog),
                    seconds(t)
                ),
                None => "ETA unknown until a CTA finishes".into(),
            },
        };
        d.show(View {
            label: kernel,
            unit: "CTAs",
            done: s.ctas_done,
            total: s.ctas,
            message: format!(
                "cycle {}, {} warp instructions ({}/s), {eta}",
                count(s.cycle),
                count(s.warp_instructions),
                count(rate as u64)
            ),
        });
    }

    pub fn finish(&mut self) {
        if let Some(d) = self.display.as_mut() {
            d.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_for_numbers_and_times() {
        assert_eq!(count(999), "999");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(count(4_560_000_000), "4.56G");
        assert_eq!(seconds(Duration::from_secs(245)), "4 min 05 s");
        assert_eq!(
            eta(Duration::from_secs(10), 1, 4),
            Some(Duration::from_secs(30))
        );
        assert_eq!(eta(Duration::from_secs(10), 0, 4), None);
    }

    /// Plain lines: nothing for the first 2 s, then one every 10 s however often it is polled.
    #[test]
    fn plain_lines_are_rate_limited() {
        let mut d = Display::new(Style::Plain);
        let t0 = d.started;
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(!d.line_due(at(1.9)));
        assert!(d.line_due(at(2.0)));
        assert!(!d.line_due(at(2.5)));
        assert!(!d.line_due(at(11.9)));
        assert!(d.line_due(at(12.0)));
        let v = View {
            label: "k",
            unit: "CTAs",
            done: 3,
            total: 16,
            message: "cycle 4096".into(),
        };
        assert_eq!(
            plain_line(&v, Duration::from_secs(75)),
            "gpusim: k: 3/16 CTAs, cycle 4096, 1 min 15 s elapsed"
        );
    }
}
