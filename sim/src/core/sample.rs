//! Sampled simulation of a long launch (`--sample`): simulate warm-up waves and a few
//! measured ones in full detail, skip the middle of the launch at the throughput the measured
//! waves showed, and simulate its last waves in full detail again (the tail, where a partial
//! last wave leaves SMs idle, is where wave quantisation costs time, so it is never
//! extrapolated).
//!
//! The approach is TBPoint/Photon's: in a launch of many identical CTAs the GPU settles into a
//! steady state after the first wave (cold caches, all CTAs starting together), and CTAs then
//! complete at a constant rate. Progress is counted in completed CTAs: with `C` CTAs resident
//! at once (the first dispatch fills every slot) a wave is `C` completions. The unit measured
//! is a wave, or when a grid row (its x dimension) is longer than a wave, the whole waves that
//! cover a row: CTAs along a row usually share an operand (a GEMM's row of A tiles), so the
//! waves that start a row fetch what the rest find in L2, and a unit must hold both.
//!
//! The steady state is detected, not assumed. The warm-up lasts at least one unit when units
//! are longer than a wave, and until the L2 is warm: it has evicted as many lines as it holds
//! (its contents replaced once: a GEMM writing C streams it through the L2, and its waves slow
//! down by half once dirty C lines are being written back), or a whole wave missed nothing in
//! it (the footprint fits). Then units are measured until the last `measured_waves` of them
//! took the same time within `tolerance` (a memory-bound launch's queues may take several
//! waves to fill); the rate is theirs. A launch that never settles before too little is left to skip
//! runs in full.
//!
//! A skip removes whole waves of CTAs (a multiple of `C` and of the cluster size) from the
//! front of the undispatched ones: they are counted complete and their time —
//! `skipped / rate` cycles — is added to the launch's cycles; the CTAs still running finish and
//! the last `U mod C` CTAs are dispatched and simulated as they would have been. No clock is
//! moved, so every component keeps its timing.
//!
//! The error bound is the largest relative deviation of the measured units' times from their
//! mean, applied to the skipped cycles — a heuristic; the real error against full simulation
//! is measured in docs/performance.md.

use serde::Serialize;

/// How a launch is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSpec {
    /// Waves simulated before measuring (cold caches, the first dispatch).
    pub warmup_waves: u32,
    /// Consecutive units (waves, or the waves covering a grid row) whose times give the
    /// steady-state throughput (≥ 1).
    pub measured_waves: u32,
    /// How far (a fraction of their mean) those units' times may spread for the launch to
    /// count as settled.
    pub tolerance: f64,
}

impl Default for SampleSpec {
    fn default() -> SampleSpec {
        SampleSpec {
            warmup_waves: 1,
            measured_waves: 2,
            tolerance: 0.03,
        }
    }
}

/// What sampling did to one launch (in the launch's stats, `sample`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SampleReport {
    /// Whether CTAs were skipped (false: the launch ran in full).
    pub sampled: bool,
    /// Why nothing was skipped, when nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_sampled_because: Option<String>,
    pub ctas: u64,
    /// CTAs resident at once: one wave.
    pub wave_ctas: u64,
    /// CTAs of a measured unit: whole waves, covering a grid row.
    pub unit_ctas: u64,
    /// CTAs completed before the measurement began.
    pub warmup_ctas: u64,
    pub measured_waves: u32,
    /// Cycles of each unit measured, up to the decision; the last `measured_waves` gave the
    /// rate.
    pub unit_cycles: Vec<u64>,
    pub simulated_ctas: u64,
    pub skipped_ctas: u64,
    /// Cycles that ran in full detail.
    pub simulated_cycles: u64,
    /// Cycles added for the skipped CTAs.
    pub skipped_cycles: u64,
    /// The launch's predicted cycles: simulated + skipped.
    pub predicted_cycles: u64,
    /// The measured units' largest relative deviation from their mean times the skipped
    /// cycles, as a fraction of the prediction (None: one measured unit gives no spread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_error: Option<f64>,
    /// Warp instructions simulated, and with those the skipped CTAs would have issued at the
    /// measured units' instructions per completed CTA.
    pub simulated_warp_instructions: u64,
    pub estimated_warp_instructions: u64,
}

/// The skip a sampler decided: these CTAs are counted complete, not simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skip {
    pub ctas: u64,
    /// The cycles the skipped CTAs are predicted to take, and the span of simulated cycles
    /// [from, to) whose rate predicted them (the measured units): the power governor prices
    /// the skipped time as that span ran (`power::Governor::skip`).
    pub cycles: u64,
    pub measured: (u64, u64),
}

/// Counters summed over the SMs, read when a wave or unit ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Warp instructions of the CTAs completed so far.
    pub retired_warp_instructions: u64,
    pub l2_misses: u64,
    pub l2_evictions: u64,
}

/// A point on the launch's completion curve.
#[derive(Clone, Copy, Debug)]
struct Mark {
    cycle: u64,
    done: u64,
    warp_instructions: u64,
}

/// Watches a launch's completed CTAs and decides, once, what to skip.
#[derive(Debug)]
pub struct Sampler {
    spec: SampleSpec,
    ctas: u64,
    cluster_ctas: u64,
    wave: u64,
    unit: u64,
    warmup: u64,
    /// Lines the L2 holds.
    l2_lines: u64,
    /// The start of the measurement, then the end of each measured unit.
    marks: Vec<Mark>,
    /// L2 misses when the warm-up was last extended by a wave (None: not extended yet).
    warm_misses: Option<u64>,
    skipped: Option<(Skip, u64, u64)>,
    not_sampled: Option<String>,
}

impl Sampler {
    /// `first_dispatch`: the CTAs dispatched at cycle 0 (every slot the launch can fill);
    /// `row_ctas`: the grid's x dimension; `l2_lines`: the lines the L2 holds.
    pub fn new(
        spec: SampleSpec,
        ctas: u64,
        cluster_ctas: u64,
        first_dispatch: u64,
        row_ctas: u64,
        l2_lines: u64,
    ) -> Sampler {
        let wave = first_dispatch;
        let unit = if wave > 0 && row_ctas > wave {
            row_ctas.div_ceil(wave) * wave
        } else {
            wave
        };
        let warmup = (u64::from(spec.warmup_waves) * wave).max(if unit > wave { unit } else { 0 });
        let mut s = Sampler {
            spec,
            ctas,
            cluster_ctas: cluster_ctas.max(1),
            wave,
            unit,
            warmup,
            l2_lines,
            marks: Vec::new(),
            warm_misses: None,
            skipped: None,
            not_sampled: None,
        };
        // The warm-up, the measured units, a wave to skip and the tail's wave.
        if wave == 0 || s.needed() > ctas {
            let needed = s.needed();
            s.not_sampled = Some(format!(
                "{ctas} CTAs are fewer than the {needed} sampling needs (warm-up {warmup}, \
                 {} measured units of {unit}, a wave of {wave} to skip and one for the tail)",
                spec.measured_waves
            ));
        } else if warmup == 0 {
            s.marks.push(Mark {
                cycle: 0,
                done: 0,
                warp_instructions: 0,
            });
        }
        s
    }

    /// CTAs sampling needs: the warm-up, the measured units, a wave to skip and the tail's.
    fn needed(&self) -> u64 {
        self.warmup
            .saturating_add(self.unit.saturating_mul(self.spec.measured_waves.into()))
            .saturating_add(2 * self.wave)
    }

    /// Whether the sampler still waits for completions (cheap: called every cycle).
    #[inline]
    pub fn watching(&self) -> bool {
        self.skipped.is_none() && self.not_sampled.is_none()
    }

    /// The completed CTAs at which the next mark is taken.
    #[inline]
    pub fn next_threshold(&self) -> u64 {
        // Mark 0 ends the warm-up; mark i ends the i-th measured unit.
        self.warmup + self.unit * self.marks.len() as u64
    }

    /// After a cycle: `done` CTAs completed, `dispatched` handed to SMs, `counts` the
    /// counters so far (read only when a wave or unit ends). Returns the skip once decided.
    pub fn observe(
        &mut self,
        cycle: u64,
        done: u64,
        dispatched: u64,
        counts: impl FnOnce() -> Counts,
    ) -> Option<Skip> {
        if !self.watching() || done < self.next_threshold() {
            return None;
        }
        let c = counts();
        if self.marks.is_empty() && !self.l2_warm(c) {
            return None;
        }
        self.marks.push(Mark {
            cycle,
            done,
            warp_instructions: c.retired_warp_instructions,
        });
        let n = self.spec.measured_waves as usize;
        if self.marks.len() <= n {
            return None;
        }
        let window = &self.marks[self.marks.len() - n - 1..];
        let undispatched = self.ctas - dispatched;
        let whole = undispatched / self.wave * self.wave;
        let ctas = whole / self.cluster_ctas * self.cluster_ctas;
        if spread(window) > self.spec.tolerance {
            // Not settled: measure another unit while that would still leave a wave to skip.
            if undispatched < self.unit + self.wave {
                let times: Vec<u64> = unit_times(window).collect();
                self.not_sampled = Some(format!(
                    "the launch did not settle: the last {n} units of {} CTAs took {times:?} \
                     cycles, more than {:.1}% apart, with too little left to skip",
                    self.unit,
                    100.0 * self.spec.tolerance
                ));
            }
            return None;
        }
        if ctas == 0 {
            self.not_sampled = Some(format!(
                "after the measured units only {undispatched} CTAs were left to dispatch, \
                 less than a wave of {}",
                self.wave
            ));
            return None;
        }
        let (first, last) = (window[0], window[n]);
        let done_in = (last.done - first.done).max(1);
        let cycles_in = last.cycle - first.cycle;
        let skipped_cycles = (ctas as f64 * cycles_in as f64 / done_in as f64).round() as u64;
        let insts = ((last.warp_instructions - first.warp_instructions) as f64 * ctas as f64
            / done_in as f64)
            .round() as u64;
        let skip = Skip {
            ctas,
            cycles: skipped_cycles,
            measured: (first.cycle, last.cycle),
        };
        self.skipped = Some((skip, skipped_cycles, insts));
        Some(skip)
    }

    /// At the end of the warm-up: whether the L2 is warm (it has evicted as many lines as
    /// it holds, or missed nothing for a wave); if not, the warm-up grows by a wave, or sampling is
    /// abandoned when the launch is too short for that.
    fn l2_warm(&mut self, c: Counts) -> bool {
        if c.l2_evictions >= self.l2_lines || self.warm_misses == Some(c.l2_misses) {
            return true;
        }
        self.warm_misses = Some(c.l2_misses);
        self.warmup += self.wave;
        if self.needed() > self.ctas {
            self.not_sampled = Some(format!(
                "the L2 was still warming up after {} of {} CTAs (it had evicted fewer lines \
                 than it holds, and every wave missed in it)",
                self.warmup - self.wave,
                self.ctas
            ));
        }
        false
    }

    /// The report, once the launch ended after `cycles` simulated cycles and
    /// `warp_instructions` simulated warp instructions.
    pub fn report(&self, cycles: u64, warp_instructions: u64) -> SampleReport {
        let none = Skip {
            ctas: 0,
            cycles: 0,
            measured: (0, 0),
        };
        let (skip, skipped_cycles, insts) = self.skipped.unwrap_or((none, 0, 0));
        let predicted = cycles + skipped_cycles;
        let n = self.spec.measured_waves as usize;
        let estimated_error = (self.skipped.is_some() && n >= 2).then(|| {
            let window = &self.marks[self.marks.len() - n - 1..];
            spread(window) * skipped_cycles as f64 / predicted.max(1) as f64
        });
        SampleReport {
            sampled: self.skipped.is_some(),
            not_sampled_because: match (&self.not_sampled, self.skipped) {
                (Some(r), _) => Some(r.clone()),
                (None, None) => Some("the launch ended before the measured units did".into()),
                (None, Some(_)) => None,
            },
            ctas: self.ctas,
            wave_ctas: self.wave,
            unit_ctas: self.unit,
            warmup_ctas: self.warmup,
            measured_waves: self.spec.measured_waves,
            unit_cycles: unit_times(&self.marks).collect(),
            simulated_ctas: self.ctas - skip.ctas,
            skipped_ctas: skip.ctas,
            simulated_cycles: cycles,
            skipped_cycles,
            predicted_cycles: predicted,
            estimated_error,
            simulated_warp_instructions: warp_instructions,
            estimated_warp_instructions: warp_instructions + insts,
        }
    }
}

/// The cycles between consecutive marks: unit times.
fn unit_times(marks: &[Mark]) -> impl Iterator<Item = u64> + '_ {
    marks.windows(2).map(|w| w[1].cycle - w[0].cycle)
}

/// The largest relative deviation of the unit times between `marks` from their mean (0 for
/// one unit).
fn spread(marks: &[Mark]) -> f64 {
    let times: Vec<f64> = unit_times(marks).map(|t| t as f64).collect();
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    times
        .iter()
        .map(|t| (t - mean).abs() / mean.max(1.0))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters of a run whose L2 is warm (it has evicted more lines than it holds).
    fn warm(warp_instructions: u64) -> impl FnOnce() -> Counts {
        move || Counts {
            retired_warp_instructions: warp_instructions,
            l2_misses: 0,
            l2_evictions: 1_000_000,
        }
    }

    /// A steady launch: 10 waves of 4 CTAs, each wave 101 cycles, 50 warp instructions per CTA.
    fn steady(spec: SampleSpec) -> (Sampler, Option<(u64, Skip)>) {
        let mut s = Sampler::new(spec, 40, 1, 4, 4, 1000);
        let mut decided = None;
        for wave in 1..=10u64 {
            let cycle = wave * 101;
            let done = wave * 4;
            let dispatched = (done + 4).min(40);
            if let Some(k) = s.observe(cycle, done, dispatched, warm(done * 50)) {
                decided = Some((cycle, k));
                break;
            }
        }
        (s, decided)
    }

    #[test]
    fn a_steady_launch_skips_whole_waves_at_the_measured_rate() {
        let (s, decided) = steady(SampleSpec::default());
        // Warm-up ends at 4 done (cycle 101), two measured waves end at 12 done (cycle 303):
        // 16 dispatched, 24 left to dispatch → 6 whole waves skipped.
        let (cycle, skip) = decided.expect("a skip");
        assert_eq!(cycle, 303);
        assert_eq!(skip.ctas, 24);
        let r = s.report(cycle + 250, 1000);
        assert!(r.sampled);
        assert_eq!(r.unit_cycles, vec![101, 101]);
        assert_eq!(r.skipped_cycles, 6 * 101);
        assert_eq!(r.predicted_cycles, cycle + 250 + 606);
        assert_eq!(r.estimated_error, Some(0.0));
        assert_eq!(r.estimated_warp_instructions, 1000 + 24 * 50);
        assert_eq!(r.simulated_ctas, 16);
    }

    #[test]
    fn a_short_launch_is_not_sampled() {
        let s = Sampler::new(SampleSpec::default(), 15, 1, 4, 1, 1000);
        assert!(!s.watching());
        let r = s.report(500, 10);
        assert!(!r.sampled);
        assert!(r
            .not_sampled_because
            .unwrap()
            .contains("fewer than the 20 sampling needs"));
        assert_eq!(r.predicted_cycles, 500);
    }

    #[test]
    fn skips_keep_clusters_whole_and_the_rate_comes_from_the_settled_waves() {
        let mut s = Sampler::new(SampleSpec::default(), 84, 4, 12, 12, 1000);
        assert!(s.observe(90, 12, 24, warm(0)).is_none());
        // Waves of 150 then 100 cycles: 40% apart, not settled.
        assert!(s.observe(240, 24, 36, warm(0)).is_none());
        assert!(s.observe(340, 36, 48, warm(0)).is_none());
        // 100 then 102: settled. 36 left to dispatch → 36 skipped (3 waves; clusters of 4).
        let k = s.observe(442, 48, 48, warm(0)).expect("a skip");
        assert_eq!(k.ctas, 36);
        let r = s.report(600, 0);
        assert_eq!(r.unit_cycles, vec![150, 100, 102]);
        // 36 CTAs at 24 per 202 cycles (the settled waves only).
        assert_eq!(r.skipped_cycles, 303);
        let e = r.estimated_error.unwrap();
        assert!((e - 1.0 / 101.0 * 303.0 / 903.0).abs() < 1e-9, "{e}");
    }

    #[test]
    fn a_launch_that_never_settles_runs_in_full() {
        let mut s = Sampler::new(SampleSpec::default(), 24, 1, 4, 4, 1000);
        let mut cycle = 0;
        for wave in 1..=6u64 {
            cycle += 100 + 20 * wave;
            let done = wave * 4;
            assert!(s
                .observe(cycle, done, (done + 4).min(24), warm(0))
                .is_none());
        }
        let r = s.report(cycle, 0);
        assert!(!r.sampled);
        assert_eq!(r.skipped_ctas, 0);
        assert!(r.not_sampled_because.unwrap().contains("did not settle"));
    }

    #[test]
    fn units_cover_a_grid_row() {
        // Rows of 10 CTAs, waves of 4: units of 3 waves, and a warm-up of one unit.
        let mut s = Sampler::new(SampleSpec::default(), 60, 1, 4, 10, 1000);
        assert_eq!(s.next_threshold(), 12);
        assert!(s.observe(100, 8, 12, warm(0)).is_none());
        assert!(s.observe(150, 12, 16, warm(0)).is_none());
        assert_eq!(s.next_threshold(), 24);
        assert!(s.observe(450, 24, 28, warm(0)).is_none());
        // Units of 300 and 303 cycles: 20 left to dispatch → 20 skipped, 24 CTAs in 603 cycles.
        let k = s.observe(753, 36, 40, warm(0)).expect("a skip");
        assert_eq!(k.ctas, 20);
        let r = s.report(1000, 0);
        assert_eq!((r.unit_ctas, r.warmup_ctas), (12, 12));
        assert_eq!(r.unit_cycles, vec![300, 303]);
        assert_eq!(r.skipped_cycles, (20.0f64 * 603.0 / 24.0).round() as u64);
        // A row longer than the launch allows: not sampled.
        let s = Sampler::new(SampleSpec::default(), 40, 1, 4, 40, 1000);
        assert!(!s.watching());
    }

    #[test]
    fn the_warmup_lasts_until_the_l2_is_warm() {
        let mut s = Sampler::new(SampleSpec::default(), 40, 1, 4, 4, 1000);
        let filling = |misses| {
            move || Counts {
                retired_warp_instructions: 0,
                l2_misses: misses,
                l2_evictions: misses,
            }
        };
        // Wave 1 missed, wave 2 missed more: still filling, the warm-up grows.
        assert!(s.observe(100, 4, 8, filling(10)).is_none());
        assert_eq!(s.next_threshold(), 8);
        assert!(s.observe(200, 8, 12, filling(20)).is_none());
        assert_eq!(s.next_threshold(), 12);
        // Wave 3 missed nothing: warm; the measurement starts at 12.
        assert!(s.observe(300, 12, 16, filling(20)).is_none());
        assert_eq!(s.next_threshold(), 16);
        // Evictions of as many lines as the L2 holds: warm.
        let mut s = Sampler::new(SampleSpec::default(), 40, 1, 4, 4, 30);
        assert!(s.observe(100, 4, 8, filling(10)).is_none());
        assert_eq!(s.next_threshold(), 8);
        assert!(s.observe(200, 8, 12, filling(30)).is_none());
        assert_eq!(s.next_threshold(), 12);
        // A launch whose L2 never stops filling runs in full.
        let mut s = Sampler::new(SampleSpec::default(), 24, 1, 4, 4, 1000);
        for w in 1..=6u64 {
            assert!(s
                .observe(100 * w, 4 * w, 4 * w + 4, filling(10 * w))
                .is_none());
        }
        let r = s.report(600, 0);
        assert!(!r.sampled);
        assert!(
            r.not_sampled_because
                .as_deref()
                .unwrap()
                .contains("still warming up"),
            "{r:?}"
        );
    }

    #[test]
    fn warmup_zero_measures_from_the_start() {
        let spec = SampleSpec {
            warmup_waves: 0,
            measured_waves: 1,
            ..Default::default()
        };
        let (s, decided) = steady(spec);
        let (cycle, skip) = decided.unwrap();
        assert_eq!((cycle, skip.ctas), (101, 32));
        let r = s.report(cycle + 101, 100);
        assert_eq!(r.unit_cycles, vec![101]);
        assert_eq!(r.estimated_error, None);
        assert_eq!(r.skipped_cycles, 8 * 101);
    }
}
