//! A progress line on stderr for long runs: shown only when stderr is a terminal and a launch
//! has run for more than a second, so tests, pipes and CI logs never see it.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    enabled: bool,
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled: enabled && std::io::stderr().is_terminal(),
            started: Instant::now(),
            bar: None,
        }
    }

    /// Called every few thousand cycles with the launch's state.
    pub fn update(&mut self, kernel: &str, cycle: u64, ctas_done: u64, ctas: u64) {
        if !self.enabled || self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(ctas);
            b.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} CTAs  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_prefix(kernel.to_string());
            b
        });
        bar.set_position(ctas_done);
        bar.set_message(format!("cycle {cycle}"));
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
