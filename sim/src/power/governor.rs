//! The clock governor: every `clock.control_interval_us` of simulated time it prices the
//! interval just ended (`PowerModel`) and, under `power.limit_watts`, picks the next
//! interval's core clock — the highest step in [`clock.min_mhz`, `clock_mhz`] whose predicted
//! power stays under the limit, as a GPU's power management steps its clock down under a
//! dense load and back up when the load lightens. It also turns cycles into seconds (a cycle
//! lasts 1 / clock) and keeps the launch's energy and clock timeline.
//!
//! The decision uses the intervals of the last `clock.window_us` (power sensing averages) and
//! assumes the next interval does the same work per cycle: core-domain energy per cycle
//! scales with V², DRAM power stays, static power follows V. Decisions are a function of the
//! counters alone, so runs stay deterministic.

use std::collections::VecDeque;

use serde::Serialize;

use super::activity::Activity;
use super::model::{Parts, PowerModel};
use crate::config::Config;

/// One control interval of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub start_cycle: u64,
    pub cycles: u64,
    /// Simulated time at the interval's start.
    pub start_us: f64,
    pub mhz: u32,
    /// Average power over the interval (None without a power model).
    pub watts: Option<f64>,
    /// Cycles a sampled launch skipped (`--sample`), priced as the measured units ran:
    /// `start_cycle` is the simulated cycle at which they were skipped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

/// The clock a launch ran at (`KernelStats::clock`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClockReport {
    /// Simulated time: every cycle at the clock it ran at.
    pub seconds: f64,
    /// Cycle-weighted mean core clock, and its extremes.
    pub mean_mhz: f64,
    pub min_mhz: u32,
    pub max_mhz: u32,
    /// Whether a power limit moved (or could have moved) the clock.
    pub governed: bool,
    /// How many times the clock changed.
    pub changes: u32,
    pub timeline: Vec<Interval>,
}

/// What a launch's work cost (`KernelStats::power`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerReport {
    pub energy_joules: f64,
    pub average_watts: f64,
    /// The highest interval average.
    pub peak_watts: f64,
    pub limit_watts: Option<f64>,
    /// Energy by part, in joules.
    pub joules: Parts,
    /// Tensor-core floating-point operations (2 per multiply-add) and the energy per one.
    pub tensor_flops: u64,
    pub pj_per_tensor_flop: Option<f64>,
    /// The tensor operands' bit density (None in a timing-only run: the reference is used).
    pub tensor_operand_density: Option<f64>,
}

/// What the window keeps of one interval.
#[derive(Clone, Copy, Debug)]
struct Sample {
    cycles: u64,
    seconds: f64,
    /// Core-domain dynamic energy as the governor estimates it, restated at the boost voltage
    /// (÷ (V/V_boost)²).
    core_joules_at_boost: f64,
    dram_joules: f64,
    active_sm_cycles: f64,
}

pub struct Governor {
    model: Option<PowerModel>,
    /// The intervals of the averaging window, oldest first, and how many it holds.
    window: VecDeque<Sample>,
    window_len: usize,
    governed: bool,
    boost: u32,
    min: u32,
    step: u32,
    interval_us: f64,
    mhz: u32,
    /// The first cycle of the open interval, and the counts at its start.
    start: u64,
    at_start: Activity,
    next_control: u64,
    seconds: f64,
    energy: Parts,
    peak_watts: f64,
    changes: u32,
    timeline: Vec<Interval>,
    /// Each closed interval's energy by part (beside `timeline`; empty without a model).
    energies: Vec<Parts>,
    /// Cycle-weighted clock sum, for the mean.
    mhz_cycles: f64,
}

impl Governor {
    pub fn new(cfg: &Config) -> Governor {
        let model = PowerModel::of(cfg);
        let boost = cfg.clock_mhz.unwrap_or(1000);
        let mhz = cfg.start_mhz().unwrap_or(boost);
        let c = &cfg.clock;
        // (A window of a million intervals is allowed; its memory is taken as it fills.)
        let window_len = (c.window_us / c.control_interval_us).round().max(1.0) as usize;
        let mut g = Governor {
            model,
            window: VecDeque::with_capacity(window_len.min(64) + 1),
            window_len,
            governed: cfg.governed(),
            boost,
            min: c.min_mhz.unwrap_or(boost).min(boost),
            step: c.step_mhz.max(1),
            interval_us: c.control_interval_us,
            mhz,
            start: 0,
            at_start: Activity::default(),
            next_control: u64::MAX,
            seconds: 0.0,
            energy: Parts::default(),
            peak_watts: 0.0,
            changes: 0,
            timeline: Vec::new(),
            energies: Vec::new(),
            mhz_cycles: 0.0,
        };
        g.next_control = g.interval_end(0);
        g
    }

    /// The core clock now, in MHz.
    pub fn mhz(&self) -> u32 {
        self.mhz
    }

    /// The average power of the last closed control interval (None before the first, or
    /// without a power model): the timeline's power counter.
    pub fn last_watts(&self) -> Option<f64> {
        self.timeline.last().and_then(|i| i.watts)
    }

    /// Whether an interval ends with `cycle` (checked after each simulated cycle).
    #[inline]
    pub fn due(&self, cycle: u64) -> bool {
        cycle >= self.next_control
    }

    /// Close the interval through `cycle` with the counts `now`; returns the new clock when
    /// the governor changed it (the memory system's DRAM domain must follow).
    pub fn control(&mut self, cycle: u64, now: &Activity) -> Option<u32> {
        self.close(cycle + 1, now);
        let next = match (self.governed, &self.model) {
            (true, Some(m)) => m.limit_watts().map(|limit| self.choose(m, limit)),
            _ => None,
        };
        let changed = next.filter(|&f| f != self.mhz);
        if let Some(f) = changed {
            self.mhz = f;
            self.changes += 1;
        }
        self.next_control = self.interval_end(cycle + 1);
        changed
    }

    /// A sampled launch skipped CTAs at simulated cycle `cycle` (counts `now`): their
    /// predicted `cycles` are priced at the rate of the simulated span `measured` — its time
    /// per cycle (its clocks) and its energy per cycle — as one interval of the timeline.
    pub fn skip(&mut self, cycle: u64, now: &Activity, cycles: u64, measured: (u64, u64)) {
        self.close(cycle + 1, now);
        let (from, to) = measured;
        let (mut span, mut seconds, mut energy) = (0.0, 0.0, Parts::default());
        for (k, i) in self.timeline.iter().enumerate().filter(|(_, i)| !i.skipped) {
            let (a, b) = (i.start_cycle.max(from), (i.start_cycle + i.cycles).min(to));
            if b <= a {
                continue;
            }
            let share = (b - a) as f64 / i.cycles as f64;
            span += (b - a) as f64;
            seconds += share * i.cycles as f64 / (i.mhz as f64 * 1e6);
            if let Some(e) = self.energies.get(k) {
                energy.add(&e.scaled(share));
            }
        }
        if span == 0.0 || cycles == 0 {
            return;
        }
        let k = cycles as f64 / span;
        let (secs, parts) = (seconds * k, energy.scaled(k));
        let mhz = (cycles as f64 / secs / 1e6).round() as u32;
        let watts = self.model.map(|_| parts.total() / secs);
        self.timeline.push(Interval {
            start_cycle: self.start,
            cycles,
            start_us: self.seconds * 1e6,
            mhz,
            watts,
            skipped: true,
        });
        if self.model.is_some() {
            self.energies.push(parts);
            self.energy.add(&parts);
        }
        self.seconds += secs;
        self.mhz_cycles += cycles as f64 / secs / 1e6 * cycles as f64;
    }

    /// The launch ended after `cycles` simulated cycles with the counts `now`.
    pub fn finish(mut self, cycles: u64, now: &Activity) -> (ClockReport, Option<PowerReport>) {
        if cycles > self.start || self.timeline.is_empty() {
            self.close(cycles.max(self.start), now);
        }
        let total_cycles: u64 = self.timeline.iter().map(|i| i.cycles).sum();
        let total_cycles = total_cycles.max(1) as f64;
        // Over the clocks cycles ran at (a change in the last cycle ran none).
        let ran = self.timeline.iter().map(|i| i.mhz);
        let (min_mhz, max_mhz) = ran
            .fold(None, |r: Option<(u32, u32)>, f| {
                Some(r.map_or((f, f), |(lo, hi)| (lo.min(f), hi.max(f))))
            })
            .unwrap_or((self.mhz, self.mhz));
        let clock = ClockReport {
            seconds: self.seconds,
            mean_mhz: self.mhz_cycles / total_cycles,
            min_mhz,
            max_mhz,
            governed: self.governed,
            changes: self.changes,
            timeline: self.timeline,
        };
        let power = self.model.map(|m| {
            let energy = self.energy.total();
            let fmas: u64 = now.events.tensor_fmas.iter().sum();
            let ev = &now.events;
            PowerReport {
                energy_joules: energy,
                average_watts: if self.seconds > 0.0 {
                    energy / self.seconds
                } else {
                    0.0
                },
                peak_watts: self.peak_watts,
                limit_watts: m.limit_watts(),
                joules: self.energy,
                tensor_flops: 2 * fmas,
                pj_per_tensor_flop: (fmas > 0).then(|| energy / (2.0 * fmas as f64) * 1e12),
                tensor_operand_density: (ev.tensor_bits > 0)
                    .then(|| ev.tensor_set_bits as f64 / ev.tensor_bits as f64),
            }
        });
        (clock, power)
    }

    fn hz(&self) -> f64 {
        self.mhz as f64 * 1e6
    }

    /// The cycle after which the interval starting at `from` ends, at the current clock;
    /// never, when nothing would be learnt (no power model and no governor).
    fn interval_end(&self, from: u64) -> u64 {
        if self.model.is_none() {
            return u64::MAX;
        }
        let cycles = (self.interval_us * self.mhz as f64).round().max(1.0) as u64;
        from + cycles - 1
    }

    /// Account the interval [start, end) at the current clock and add it to the window.
    fn close(&mut self, end: u64, now: &Activity) {
        let cycles = end.saturating_sub(self.start);
        let secs = cycles as f64 / self.hz();
        let start_us = self.seconds * 1e6;
        self.seconds += secs;
        self.mhz_cycles += cycles as f64 * self.mhz as f64;
        let mut watts = None;
        let mut energy = None;
        if let Some(m) = &self.model {
            let d = now.since(&self.at_start);
            let mut parts = m.dynamic(&d, self.mhz as f64);
            let active = if cycles > 0 {
                d.events.active_cycles as f64 / (cycles as f64 * m.sms())
            } else {
                0.0
            };
            parts.static_ = m.static_watts(active, self.mhz as f64) * secs;
            let w = if secs > 0.0 {
                parts.total() / secs
            } else {
                0.0
            };
            self.energy.add(&parts);
            self.peak_watts = self.peak_watts.max(w);
            watts = Some(w);
            energy = Some(parts);
            let v = m.volts(self.mhz as f64) / m.volts(self.boost as f64);
            // The governor decides on its own estimate (`power.governor_data_share`).
            let seen = m.estimated_dynamic(&d, self.mhz as f64);
            self.window.push_back(Sample {
                cycles,
                seconds: secs,
                core_joules_at_boost: seen.core_dynamic() / (v * v),
                dram_joules: parts.dram,
                active_sm_cycles: d.events.active_cycles as f64,
            });
            if self.window.len() > self.window_len {
                self.window.pop_front();
            }
        }
        if cycles > 0 {
            self.timeline.push(Interval {
                start_cycle: self.start,
                cycles,
                start_us,
                mhz: self.mhz,
                watts,
                skipped: false,
            });
            self.energies.extend(energy);
        }
        self.start = end;
        self.at_start = *now;
    }

    /// The highest clock step whose power, predicted from the window's work per cycle, is
    /// under `limit`; the lowest step if none is.
    fn choose(&self, m: &PowerModel, limit: f64) -> u32 {
        let sum = |f: fn(&Sample) -> f64| self.window.iter().map(f).sum::<f64>();
        let cycles = sum(|s| s.cycles as f64).max(1.0);
        let seconds = sum(|s| s.seconds);
        let per_cycle = sum(|s| s.core_joules_at_boost) / cycles;
        let dram_watts = if seconds > 0.0 {
            sum(|s| s.dram_joules) / seconds
        } else {
            0.0
        };
        let active = sum(|s| s.active_sm_cycles) / (cycles * m.sms());
        let v_boost = m.volts(self.boost as f64);
        let mut f = self.boost;
        loop {
            let v = m.volts(f as f64) / v_boost;
            let p =
                per_cycle * v * v * f as f64 * 1e6 + dram_watts + m.static_watts(active, f as f64);
            if p <= limit || f <= self.min {
                return f.max(self.min);
            }
            f = f.saturating_sub(self.step).max(self.min);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::TensorKind;

    const H100: &str = include_str!("../../../configs/hopper-h100.yaml");

    fn h100(sets: &[(&str, &str)]) -> Config {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_yaml("hopper-h100.yaml", H100, &sets).unwrap()
    }

    /// The counts after `cycles` of a dense bf16 load on every SM at `fmas_per_cycle`.
    fn dense(prev: &Activity, cycles: u64, fmas_per_cycle: u64, sms: u64) -> Activity {
        let mut a = *prev;
        a.events.tensor_fmas[TensorKind::F16 as usize] += cycles * fmas_per_cycle;
        a.events.active_cycles += cycles * sms;
        a.warp_instructions += cycles;
        a
    }

    /// Over the limit the governor steps the clock down to the highest step whose predicted
    /// power fits; when the load stops it returns to the boost clock.
    #[test]
    fn steps_down_under_a_dense_load_and_back_up_when_it_ends() {
        let cfg = h100(&[("clock.window_us", "10")]);
        let m = PowerModel::of(&cfg).unwrap();
        let mut g = Governor::new(&cfg);
        assert_eq!(g.mhz(), 1980);
        // 132 SMs × 4 tensor units × 512 FMAs per cycle: the wgmma peak.
        let mut now = Activity::default();
        let mut cycle = 0u64;
        let mut changed = None;
        while changed.is_none() {
            cycle += 1;
            if g.due(cycle - 1) {
                now = dense(&now, cycle - g.start, 132 * 4 * 512, 132);
                changed = g.control(cycle - 1, &now);
            }
            assert!(cycle < 100_000, "never stepped down");
        }
        let f = changed.unwrap();
        assert!((345..1980).contains(&f) && (1980 - f) % 15 == 0, "{f}");
        // The chosen step meets the limit; the one above it would not.
        let power_at = |mhz: u32| {
            let per_cycle = 132.0 * 4.0 * 512.0 * 1.82e-12 + 132.0 * 5e-12 / 132.0;
            let v = m.volts(mhz as f64) / m.volts(1980.0);
            per_cycle * v * v * mhz as f64 * 1e6 + m.static_watts(1.0, mhz as f64)
        };
        assert!(power_at(f) <= 700.0 && power_at(f + 15) > 700.0, "{f}");
        // Idle from here on: back to boost after the window has forgotten the load.
        let mut last = f;
        for _ in 0..20 {
            let end = g.next_control;
            if let Some(x) = g.control(end, &now) {
                last = x;
            }
        }
        assert_eq!(last, 1980);
        let end = g.start;
        let (clock, power) = g.finish(end, &now);
        assert!(clock.changes >= 2 && clock.min_mhz == f && clock.max_mhz == 1980);
        let p = power.unwrap();
        assert!(p.peak_watts > 700.0 && p.average_watts < p.peak_watts);
        assert_eq!(p.limit_watts, Some(700.0));
    }

    /// A locked clock never moves, however high the power.
    #[test]
    fn a_locked_clock_is_never_changed() {
        let cfg = h100(&[("clock.fixed_mhz", "1500")]);
        assert!(!cfg.governed());
        let mut g = Governor::new(&cfg);
        let mut now = Activity::default();
        for _ in 0..5 {
            let end = g.next_control;
            now = dense(&now, end + 1 - g.start, 132 * 4 * 512, 132);
            assert_eq!(g.control(end, &now), None);
        }
        let cycles = g.start;
        let (clock, _) = g.finish(cycles, &now);
        assert_eq!(
            (clock.min_mhz, clock.max_mhz, clock.changes),
            (1500, 1500, 0)
        );
        assert!((clock.seconds - cycles as f64 / 1.5e9).abs() < 1e-15);
    }

    /// A sampled launch's skipped cycles are priced as the measured span ran: its time per
    /// cycle and its energy per cycle, as one interval of the timeline.
    #[test]
    fn skipped_cycles_are_priced_as_the_measured_span_ran() {
        let cfg = h100(&[("clock.fixed_mhz", "1500")]);
        let mut g = Governor::new(&cfg);
        let mut now = Activity::default();
        // Two intervals: a light one, then the measured one (dense).
        let first = g.next_control;
        now = dense(&now, first + 1, 1000, 132);
        g.control(first, &now);
        let second = g.next_control;
        now = dense(&now, second - first, 132 * 4 * 512, 132);
        g.control(second, &now);
        let measured = (first + 1, second + 1);
        let span = second - first;
        let dense_joules = g.energies[1].total();
        g.skip(second, &now, 2 * span, measured);
        let cycles = g.start;
        let (clock, power) = g.finish(cycles, &now);
        let skipped = clock.timeline.iter().find(|i| i.skipped).unwrap();
        assert_eq!(
            (skipped.cycles, skipped.mhz, skipped.start_cycle),
            (2 * span, 1500, second + 1)
        );
        let total: u64 = clock.timeline.iter().map(|i| i.cycles).sum();
        assert_eq!(total, cycles + 2 * span);
        assert!((clock.seconds - total as f64 / 1.5e9).abs() < 1e-12);
        let p = power.unwrap();
        let light = p.energy_joules - 3.0 * dense_joules;
        assert!(
            light > 0.0 && light < dense_joules,
            "{light} vs {dense_joules}"
        );
        assert!((skipped.watts.unwrap() - dense_joules / (span as f64 / 1.5e9)).abs() < 1e-6);
    }

    /// The clock a dense bf16 load settles at, with its operands' bit density `density`.
    fn settled(cfg: &Config, density: f64) -> (u32, f64) {
        let mut g = Governor::new(cfg);
        let mut now = Activity::default();
        for _ in 0..40 {
            let end = g.next_control;
            let bits = (end + 1 - g.start) * 132 * 4 * 512 * 32;
            now = dense(&now, end + 1 - g.start, 132 * 4 * 512, 132);
            now.events.tensor_bits += bits;
            now.events.tensor_set_bits += (bits as f64 * density) as u64;
            g.control(end, &now);
        }
        let f = g.mhz();
        let end = g.start;
        let (_, power) = g.finish(end, &now);
        (f, power.unwrap().peak_watts)
    }

    /// On all-zero operands the real power falls far below the limit, but the governor's
    /// estimate, seeing less of the data (`power.governor_data_share`), still holds the clock
    /// below boost — as an H100 does (1665 MHz at 434 W on zeros, 1440 MHz at 697 W on
    /// normal(0,1) data: docs/power.md). Seeing all of it, the clock would rise to boost.
    #[test]
    fn the_governor_holds_the_clock_on_zero_operands_below_what_their_power_allows() {
        let cfg = h100(&[("clock.window_us", "10")]);
        let (typical, typical_w) = settled(&cfg, 0.607);
        let (zeros, zeros_w) = settled(&cfg, 0.0);
        assert!(typical < zeros && zeros < 1980, "{typical} {zeros}");
        assert!(
            typical_w > 600.0 && zeros_w < 550.0,
            "{typical_w} {zeros_w}"
        );
        let sees_all = h100(&[
            ("clock.window_us", "10"),
            ("power.governor_data_share", "0.61"),
        ]);
        let (free, _) = settled(&sees_all, 0.0);
        assert!(free > zeros, "{free} vs {zeros}");
    }
}
