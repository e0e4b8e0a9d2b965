//! The power model: energy of an interval's activity and static power, at a core clock.
//!
//! Structure after AccelWattch (Kandiah et al., MICRO 2021): a constant part, per-SM static
//! power that differs between idle (clock-gated) and active SMs, and dynamic energy per event.
//! Core-domain energies scale with the square of the core voltage (CV²f switching: the
//! energy of one event ∝ V²); static power of an active SM ∝ V (leakage current × V, to first
//! order); DRAM energies belong to the memory's own supply and do not move with the core
//! clock. The voltage is linear in the clock between (`clock.min_mhz`, `power.min_mv`) and
//! (`clock_mhz`, `power.boost_mv`).

use serde::Serialize;

use super::activity::Activity;
use super::events::TENSOR_KINDS;
use crate::config::{Config, PowerConfig};

/// Where energy went, in joules (or, in a rate report, watts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Parts {
    /// The constant part and the SMs' static power.
    #[serde(rename = "static")]
    pub static_: f64,
    /// Fetch, decode and issue of warp instructions.
    pub issue: f64,
    /// Lane operations on the integer, FP32, FP64, SFU, branch and address units.
    pub alu: f64,
    pub registers: f64,
    pub tensor: f64,
    /// Shared memory and L1.
    pub shared_l1: f64,
    /// L2 lookups and crossbar bytes.
    pub l2_icnt: f64,
    pub dram: f64,
}

impl Parts {
    pub fn total(&self) -> f64 {
        self.static_
            + self.issue
            + self.alu
            + self.registers
            + self.tensor
            + self.shared_l1
            + self.l2_icnt
            + self.dram
    }

    /// The parts that scale with the core voltage (all dynamic energy but DRAM's).
    pub fn core_dynamic(&self) -> f64 {
        self.issue + self.alu + self.registers + self.tensor + self.shared_l1 + self.l2_icnt
    }

    pub fn add(&mut self, o: &Parts) {
        self.static_ += o.static_;
        self.issue += o.issue;
        self.alu += o.alu;
        self.registers += o.registers;
        self.tensor += o.tensor;
        self.shared_l1 += o.shared_l1;
        self.l2_icnt += o.l2_icnt;
        self.dram += o.dram;
    }

    pub fn scaled(&self, k: f64) -> Parts {
        Parts {
            static_: self.static_ * k,
            issue: self.issue * k,
            alu: self.alu * k,
            registers: self.registers * k,
            tensor: self.tensor * k,
            shared_l1: self.shared_l1 * k,
            l2_icnt: self.l2_icnt * k,
            dram: self.dram * k,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct PowerModel {
    p: PowerConfig,
    boost_mhz: f64,
    min_mhz: f64,
    sms: f64,
}

const PJ: f64 = 1e-12;

/// Σ counts × energy per event (picojoules).
fn priced(counts: &[u64], pj: &[f64]) -> f64 {
    counts.iter().zip(pj).map(|(&n, &e)| n as f64 * e).sum()
}

impl PowerModel {
    /// The config's model; None without a `power` section (or a boost clock).
    pub fn of(cfg: &Config) -> Option<PowerModel> {
        let p = cfg.power?;
        let boost = cfg.clock_mhz? as f64;
        Some(PowerModel {
            p,
            boost_mhz: boost,
            min_mhz: cfg.clock.min_mhz.map_or(boost, |m| m as f64),
            sms: cfg.sm.count as f64,
        })
    }

    /// The core voltage at `mhz`, in volts.
    pub fn volts(&self, mhz: f64) -> f64 {
        let (lo, hi) = (self.p.min_mv, self.p.boost_mv);
        let span = self.boost_mhz - self.min_mhz;
        let x = if span > 0.0 {
            ((mhz - self.min_mhz) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        (lo + (hi - lo) * x) / 1000.0
    }

    /// Dynamic energy of `a` at core clock `mhz`, in joules (static power is `static_watts`).
    pub fn dynamic(&self, a: &Activity, mhz: f64) -> Parts {
        self.dynamic_with_share(a, mhz, self.p.tensor_data_share)
    }

    /// `dynamic` as the governor's power estimate sees it: the tensor energy priced with
    /// `power.governor_data_share` (absent: the real share, and the real energy).
    pub fn estimated_dynamic(&self, a: &Activity, mhz: f64) -> Parts {
        let share = self
            .p
            .governor_data_share
            .unwrap_or(self.p.tensor_data_share);
        self.dynamic_with_share(a, mhz, share)
    }

    /// Dynamic energy with `share` of a tensor FMA's energy following the operand data.
    fn dynamic_with_share(&self, a: &Activity, mhz: f64, share: f64) -> Parts {
        let e = &self.p.energy_pj;
        let v = self.volts(mhz) / (self.p.boost_mv / 1000.0);
        let k = v * v * PJ;
        let ev = &a.events;
        // program::Unit order: int, fp32, fp64, sfu, branch, ldst, tensor (the tensor unit's
        // lanes drive the instruction; its multiply-adds are priced below).
        let per_lane = [
            e.int_op, e.fp32_op, e.fp64_op, e.sfu_op, e.other_op, e.other_op, 0.0,
        ];
        let alu = priced(&ev.lane_ops, &per_lane);
        let per_fma: [f64; TENSOR_KINDS] = [
            e.tensor_fma_f16,
            e.tensor_fma_tf32,
            e.tensor_fma_fp8,
            e.tensor_fma_int8,
        ];
        let fma = priced(&ev.tensor_fmas, &per_fma);
        Parts {
            static_: 0.0,
            issue: a.warp_instructions as f64 * e.warp_instruction * k,
            alu: alu * k,
            registers: ev.register_accesses as f64 * e.register * k,
            tensor: fma * self.factor_with(share, ev.tensor_set_bits, ev.tensor_bits) * k,
            shared_l1: (a.shared_wavefronts as f64 * e.shared_wavefront
                + a.l1_accesses as f64 * e.l1_access)
                * k,
            l2_icnt: (a.l2_accesses as f64 * e.l2_access + a.icnt_bytes as f64 * e.icnt_byte) * k,
            dram: (a.dram_bytes as f64 * e.dram_byte
                + a.dram_activates as f64 * e.dram_activate
                + a.dram_refreshes as f64 * e.dram_refresh)
                * PJ,
        }
    }

    /// How the operands' bit density moves a tensor FMA's energy: 1 at the reference density
    /// (and when no values were read: a timing-only run).
    pub fn data_factor(&self, set_bits: u64, bits: u64) -> f64 {
        self.factor_with(self.p.tensor_data_share, set_bits, bits)
    }

    fn factor_with(&self, share: f64, set_bits: u64, bits: u64) -> f64 {
        if bits == 0 {
            return 1.0;
        }
        let rho = set_bits as f64 / bits as f64;
        1.0 - share + share * rho / self.p.tensor_reference_density
    }

    /// Static power with `active` of the SMs (a fraction) holding work, at `mhz`, in watts.
    pub fn static_watts(&self, active: f64, mhz: f64) -> f64 {
        let active = active.clamp(0.0, 1.0);
        let v = self.volts(mhz) / (self.p.boost_mv / 1000.0);
        self.p.constant_watts
            + self.sms * (1.0 - active) * self.p.sm_idle_watts
            + self.sms * active * self.p.sm_active_watts * v
    }

    pub fn limit_watts(&self) -> Option<f64> {
        self.p.limit_watts
    }

    pub fn sms(&self) -> f64 {
        self.sms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> PowerModel {
        let text = include_str!("../../../configs/hopper-h100.yaml");
        PowerModel::of(&Config::from_yaml("h100", text, &[]).unwrap()).unwrap()
    }

    #[test]
    fn voltage_is_linear_in_the_clock_between_the_two_points() {
        let m = h100();
        assert!((m.volts(1980.0) - 1.0).abs() < 1e-12);
        assert!((m.volts(345.0) - 0.79).abs() < 1e-12);
        assert!((m.volts(1162.5) - 0.895).abs() < 1e-12);
        assert!(
            (m.volts(100.0) - 0.79).abs() < 1e-12,
            "clamped below the range"
        );
    }

    /// The operand density scales the data-dependent share: 1 at the reference density and
    /// without values, 1 − share at zero.
    #[test]
    fn tensor_energy_follows_the_operand_density() {
        let m = h100();
        assert_eq!(m.data_factor(0, 0), 1.0);
        assert!((m.data_factor(607, 1000) - 1.0).abs() < 1e-12);
        assert!((m.data_factor(0, 1000) - 0.39).abs() < 1e-12);
        let mut a = Activity::default();
        a.events.tensor_fmas[0] = 1_000_000;
        let full = m.dynamic(&a, 1980.0).tensor;
        assert!((full - 1e6 * 1.82e-12).abs() < 1e-15);
        // At a lower clock the same work costs V² less; DRAM energy does not scale.
        a.dram_bytes = 1000;
        let low = m.dynamic(&a, 345.0);
        assert!((low.tensor - full * 0.79 * 0.79).abs() < 1e-15);
        assert!((low.dram - 1000.0 * 31.2e-12).abs() < 1e-18);
    }

    /// The governor's estimate re-prices only the tensor energy, with its own data share;
    /// at the reference density (and without values) it is the real energy.
    #[test]
    fn the_governors_estimate_sees_less_of_the_data() {
        let m = h100();
        let mut a = Activity::default();
        a.events.tensor_fmas[0] = 1_000_000;
        a.warp_instructions = 1000;
        a.events.tensor_bits = 1000;
        let zeros = m.dynamic(&a, 1980.0);
        let seen = m.estimated_dynamic(&a, 1980.0);
        let g = 1.0 - 0.22; // hopper-h100.yaml's governor_data_share
        assert!((seen.tensor - zeros.tensor / 0.39 * g).abs() < 1e-15);
        assert_eq!(seen.issue, zeros.issue);
        a.events.tensor_set_bits = 607;
        let typical = m.dynamic(&a, 1980.0);
        let same = m.estimated_dynamic(&a, 1980.0);
        assert!((same.tensor - typical.tensor).abs() < 1e-18);
        a.events.tensor_bits = 0;
        a.events.tensor_set_bits = 0;
        assert_eq!(m.estimated_dynamic(&a, 1980.0), m.dynamic(&a, 1980.0));
        // Even where the real energy follows the data entirely (zero at zero density), the
        // estimate keeps its own share.
        let text = include_str!("../../../configs/hopper-h100.yaml");
        let sets = [("power.tensor_data_share".to_string(), "1".to_string())];
        let all = PowerModel::of(&Config::from_yaml("h100", text, &sets).unwrap()).unwrap();
        a.events.tensor_bits = 1000;
        assert_eq!(all.dynamic(&a, 1980.0).tensor, 0.0);
        assert!((all.estimated_dynamic(&a, 1980.0).tensor - 1e6 * 1.82e-12 * g).abs() < 1e-15);
    }

    #[test]
    fn idle_sms_cost_their_idle_power_and_active_ones_scale_with_voltage() {
        let m = h100();
        let idle = m.static_watts(0.0, 345.0);
        assert!((idle - (36.8 + 132.0 * 0.283)).abs() < 1e-9, "{idle}");
        let busy = m.static_watts(1.0, 1980.0);
        assert!((busy - (36.8 + 132.0 * 0.612)).abs() < 1e-9, "{busy}");
    }
}
