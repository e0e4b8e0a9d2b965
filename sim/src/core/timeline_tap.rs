//! The launch loop's side of the timeline (`crate::timeline`): tells the SMs to record, takes
//! their records in SM order after every cycle, and samples the GPU-wide counters every
//! `TimelineSink::counter_interval` cycles from the SMs' own counters (differences over the
//! interval).

use super::sm::Sm;
use crate::config::Config;
use crate::timeline::{CounterSample, LaunchShape, Record, TimelineSink};

/// GPU-wide totals at a sample, for the next interval's differences.
#[derive(Clone, Copy, Default)]
struct Totals {
    cycle: u64,
    warp_instructions: u64,
    l1_hits: u64,
    l1_misses: u64,
    l2_hits: u64,
    l2_misses: u64,
    icnt_bytes: u64,
    dram_bytes: u64,
}

impl Totals {
    fn now(sms: &[Sm], cycle: u64) -> Totals {
        let mut t = Totals {
            cycle,
            ..Totals::default()
        };
        for s in sms {
            let m = &s.stats.memory;
            t.warp_instructions += s.stats.warp_instructions;
            t.l1_hits += m.l1_hits;
            t.l1_misses += m.l1_misses;
            t.l2_hits += m.l2_hits;
            t.l2_misses += m.l2_misses;
            t.icnt_bytes += m.icnt_bytes;
            t.dram_bytes += m.dram_bytes;
        }
        t
    }
}

/// The clock and power when a sample is taken (`power::Governor`).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub mhz: f64,
    pub watts: Option<f64>,
}

impl Clock {
    pub fn of(g: &crate::power::Governor) -> Clock {
        Clock {
            mhz: f64::from(g.mhz()),
            watts: g.last_watts(),
        }
    }
}

/// One launch's timeline recording.
pub struct TimelineTap {
    interval: u64,
    next_sample: u64,
    last: Totals,
    buf: Vec<Record>,
}

impl TimelineTap {
    /// Start recording the launch on `sink`'s SMs.
    pub fn begin(
        sink: &mut dyn TimelineSink,
        sms: &mut [Sm],
        cfg: &Config,
        kernel: &str,
        mhz: f64,
    ) -> TimelineTap {
        let memory = sink.records_memory();
        for sm in sms.iter_mut() {
            if sink.records_sm(sm.id) {
                sm.record_timeline(memory);
            }
        }
        sink.launch_begin(&LaunchShape {
            kernel: kernel.to_string(),
            sms: cfg.sm.count,
            warp_slots: cfg.sm.max_warps,
            cta_slots: cfg.sm.max_ctas,
            sub_partitions: cfg.sm.schedulers,
            clock_mhz: mhz,
        });
        let interval = sink.counter_interval();
        TimelineTap {
            interval,
            next_sample: interval,
            last: Totals::default(),
            buf: Vec::new(),
        }
    }

    /// After `cycle`: the SMs' records, then a counter sample when one is due.
    pub fn after_cycle(
        &mut self,
        sink: &mut dyn TimelineSink,
        sms: &mut [Sm],
        cycle: u64,
        clock: Clock,
    ) {
        self.drain(sink, sms, None);
        if cycle + 1 >= self.next_sample {
            self.sample(sink, sms, cycle + 1, clock);
            // The loop may jump over cycles: the next sample is the next boundary after this.
            self.next_sample = (cycle + 1) / self.interval * self.interval + self.interval;
        }
    }

    /// The launch ended after `cycles` cycles (or faulted): close every open interval.
    pub fn end(&mut self, sink: &mut dyn TimelineSink, sms: &mut [Sm], cycles: u64, clock: Clock) {
        self.drain(sink, sms, Some(cycles));
        if cycles > self.last.cycle {
            self.sample(sink, sms, cycles, clock);
        }
        sink.launch_end(cycles);
    }

    fn drain(&mut self, sink: &mut dyn TimelineSink, sms: &mut [Sm], finish_at: Option<u64>) {
        for sm in sms.iter_mut() {
            sm.take_timeline(finish_at, &mut self.buf);
            for r in self.buf.drain(..) {
                sink.record(sm.id, r);
            }
        }
    }

    fn sample(&mut self, sink: &mut dyn TimelineSink, sms: &[Sm], cycle: u64, clock: Clock) {
        let now = Totals::now(sms, cycle);
        let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
        let cycles = d(now.cycle, self.last.cycle).max(1.0);
        let rate = |hits: f64, misses: f64| (hits + misses > 0.0).then(|| hits / (hits + misses));
        sink.counters(&CounterSample {
            cycle,
            ipc: d(now.warp_instructions, self.last.warp_instructions) / cycles,
            active_warps: sms.iter().map(|s| u64::from(s.resident_warps())).sum(),
            l1_hit_rate: rate(
                d(now.l1_hits, self.last.l1_hits),
                d(now.l1_misses, self.last.l1_misses),
            ),
            l2_hit_rate: rate(
                d(now.l2_hits, self.last.l2_hits),
                d(now.l2_misses, self.last.l2_misses),
            ),
            interconnect_bytes_per_cycle: d(now.icnt_bytes, self.last.icnt_bytes) / cycles,
            dram_bytes_per_cycle: d(now.dram_bytes, self.last.dram_bytes) / cycles,
            clock_mhz: clock.mhz,
            power_watts: clock.watts,
        });
        self.last = now;
    }
}
