//! `clock` and `power`: the core clock's range and governor, and the power model's constants
//! (docs/power.md). The simulation counts core cycles; these sections decide how long a
//! cycle lasts, and what the work done in it costs in energy.

use serde::Deserialize;

/// `clock`: how the core clock (`clock_mhz` is its maximum, the boost clock) may move.
/// Absent: the core runs at `clock_mhz` throughout unless `power.limit_watts` makes the
/// governor step it down.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClockConfig {
    /// Lock the core clock (`nvidia-smi -lgc F,F`): no governor, whatever the power.
    #[serde(default)]
    pub fixed_mhz: Option<u32>,
    /// The lowest clock the governor may choose (default: `clock_mhz`, no range).
    #[serde(default)]
    pub min_mhz: Option<u32>,
    /// The governor's clock granularity.
    #[serde(default = "default_step_mhz")]
    pub step_mhz: u32,
    /// How often the governor reads the power of the interval just ended and picks the next
    /// interval's clock, in microseconds of simulated time.
    #[serde(default = "default_interval_us")]
    pub control_interval_us: f64,
    /// The governor decides on the power averaged over this much of the recent past (whole
    /// intervals, at least one), as a GPU's power sensing averages: a kernel whose phases are
    /// shorter than the window is held at the clock its average power allows.
    #[serde(default = "default_window_us")]
    pub window_us: f64,
    /// The L2 and crossbar in a clock domain of their own at this fixed clock: their
    /// bandwidths (`l2.bytes_per_cycle`, `interconnect.port_bytes_per_cycle`, then per L2
    /// cycle) do not fall with the core clock. Absent: they share the core clock.
    #[serde(default)]
    pub l2_mhz: Option<u32>,
}

impl Default for ClockConfig {
    fn default() -> Self {
        ClockConfig {
            fixed_mhz: None,
            min_mhz: None,
            step_mhz: default_step_mhz(),
            control_interval_us: default_interval_us(),
            window_us: default_window_us(),
            l2_mhz: None,
        }
    }
}

/// NVML's clock readings move in 15 MHz steps on Hopper (docs/correlation/h100-sxm-2026-11-27/
/// power.csv: 1425, 1440, 1575, 1590, 1665, 1680 MHz …).
fn default_step_mhz() -> u32 {
    15
}

/// A model choice (docs/power.md): short enough that a kernel of a millisecond settles in its
/// first few percent, as it has when run back to back on hardware.
fn default_interval_us() -> f64 {
    10.0
}

/// A model choice (docs/power.md): several control intervals, and longer than the waves of a
/// large GEMM (~15 µs on the H100), so that the clock follows the kernel's average and not
/// its phases.
fn default_window_us() -> f64 {
    50.0
}

/// `power`: the power model. Static power (a constant part, and per SM: idle or active, the
/// active part scaling with the core voltage) plus dynamic energy per event, scaled by the
/// square of the core voltage relative to the boost voltage (DRAM energy is in the memory
/// domain and does not scale). Absent: no power is reported and no limit applies.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// The board power limit the governor holds the average power of each control interval
    /// under; absent: the clock stays at `clock_mhz` (or `clock.fixed_mhz`).
    #[serde(default)]
    pub limit_watts: Option<f64>,
    /// Power that does not depend on the SMs' activity: board, memory standby, uncore.
    pub constant_watts: f64,
    /// Static power of one SM with nothing resident (clock-gated).
    pub sm_idle_watts: f64,
    /// Static power of one SM with work resident, at the boost voltage.
    pub sm_active_watts: f64,
    /// Core voltage at `clock.min_mhz` and at `clock_mhz`, in millivolts; linear between.
    pub min_mv: f64,
    pub boost_mv: f64,
    /// Dynamic energies at the boost voltage.
    pub energy_pj: EnergyConfig,
    /// The share of a tensor FMA's energy that grows with the operands' bit density (the
    /// fraction of their bits that are set): an FMA on operands of density ρ costs
    /// `e × (1 − share + share × ρ / reference_density)`.
    pub tensor_data_share: f64,
    /// The share the governor's own power estimate gives the operand data (absent: the same
    /// as `tensor_data_share`, the governor sees the real power). A GPU's power management
    /// acts on an estimate from activity counters that sees the data less than the real
    /// power does: an H100 on all-zero operands holds its clock far below boost at 434 W,
    /// with the power-cap reason set (docs/power.md, "Zero operands").
    #[serde(default)]
    pub governor_data_share: Option<f64>,
    /// The operand bit density of the data the tensor energies are stated for, and the one a
    /// timing-only run (`--skip-tensor-math`, no values) assumes.
    pub tensor_reference_density: f64,
}

/// Dynamic energy per event, in picojoules at the boost voltage.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EnergyConfig {
    /// Fetch, decode, schedule and issue of one warp instruction.
    pub warp_instruction: f64,
    /// One lane's operation, by unit (the operands' register traffic is `register`).
    pub int_op: f64,
    pub fp32_op: f64,
    pub fp64_op: f64,
    pub sfu_op: f64,
    /// Branch and memory-address lanes (`branch` and `ldst` units).
    pub other_op: f64,
    /// One 32-bit register read or write of one lane.
    pub register: f64,
    /// One tensor-core multiply-add, by input type, at the reference operand density.
    pub tensor_fma_f16: f64,
    pub tensor_fma_tf32: f64,
    pub tensor_fma_fp8: f64,
    pub tensor_fma_int8: f64,
    /// One shared-memory wavefront (a conflict-free access of the banks, or one replay).
    pub shared_wavefront: f64,
    /// One L1 lookup (hit or miss) of a sector.
    pub l1_access: f64,
    /// One L2 lookup (hit or miss).
    pub l2_access: f64,
    /// One byte across the SM ↔ L2 crossbar.
    pub icnt_byte: f64,
    /// One byte read from or written to DRAM (array, I/O and PHY).
    pub dram_byte: f64,
    /// One row activation (with its precharge).
    pub dram_activate: f64,
    /// Refreshing one bank (an all-bank refresh costs this for each bank).
    pub dram_refresh: f64,
}

impl PowerConfig {
    /// Each key's rule; the first one broken, at its key.
    pub(super) fn validate(&self) -> Result<(), (&'static str, String)> {
        if let Some(w) = self.limit_watts {
            if !(w.is_finite() && w > 0.0) {
                return Err(("power.limit_watts", format!("must be positive; got {w}")));
            }
        }
        let e = &self.energy_pj;
        for (key, v) in [
            ("power.constant_watts", self.constant_watts),
            ("power.sm_idle_watts", self.sm_idle_watts),
            ("power.sm_active_watts", self.sm_active_watts),
            ("power.energy_pj.warp_instruction", e.warp_instruction),
            ("power.energy_pj.int_op", e.int_op),
            ("power.energy_pj.fp32_op", e.fp32_op),
            ("power.energy_pj.fp64_op", e.fp64_op),
            ("power.energy_pj.sfu_op", e.sfu_op),
            ("power.energy_pj.other_op", e.other_op),
            ("power.energy_pj.register", e.register),
            ("power.energy_pj.tensor_fma_f16", e.tensor_fma_f16),
            ("power.energy_pj.tensor_fma_tf32", e.tensor_fma_tf32),
            ("power.energy_pj.tensor_fma_fp8", e.tensor_fma_fp8),
            ("power.energy_pj.tensor_fma_int8", e.tensor_fma_int8),
            ("power.energy_pj.shared_wavefront", e.shared_wavefront),
            ("power.energy_pj.l1_access", e.l1_access),
            ("power.energy_pj.l2_access", e.l2_access),
            ("power.energy_pj.icnt_byte", e.icnt_byte),
            ("power.energy_pj.dram_byte", e.dram_byte),
            ("power.energy_pj.dram_activate", e.dram_activate),
            ("power.energy_pj.dram_refresh", e.dram_refresh),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key, format!("must be zero or positive; got {v}")));
            }
        }
        for (key, v) in [
            ("power.min_mv", self.min_mv),
            ("power.boost_mv", self.boost_mv),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 5000.0) {
                return Err((key, format!("must be in (0, 5000] millivolts; got {v}")));
            }
        }
        if self.min_mv > self.boost_mv {
            return Err((
                "power.min_mv",
                format!(
                    "must not exceed power.boost_mv ({}); got {}",
                    self.boost_mv, self.min_mv
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.tensor_data_share) {
            return Err((
                "power.tensor_data_share",
                format!("must be in [0, 1]; got {}", self.tensor_data_share),
            ));
        }
        if let Some(g) = self.governor_data_share {
            if !(0.0..=1.0).contains(&g) {
                return Err((
                    "power.governor_data_share",
                    format!("must be in [0, 1]; got {g}"),
                ));
            }
        }
        if !(self.tensor_reference_density > 0.0 && self.tensor_reference_density <= 1.0) {
            return Err((
                "power.tensor_reference_density",
                format!("must be in (0, 1]; got {}", self.tensor_reference_density),
            ));
        }
        Ok(())
    }
}

impl ClockConfig {
    /// The clock range against the boost clock `boost` (`clock_mhz`).
    pub(super) fn validate(&self, boost: Option<u32>) -> Result<(), (&'static str, String)> {
        let Some(boost) = boost else {
            return Err((
                "clock",
                "needs clock_mhz (the boost clock the range is below)".into(),
            ));
        };
        if let Some(f) = self.fixed_mhz {
            if f == 0 || f > boost {
                return Err((
                    "clock.fixed_mhz",
                    format!("must be in 1..={boost} (clock_mhz, the boost clock); got {f}"),
                ));
            }
        }
        if let Some(m) = self.min_mhz {
            if m == 0 || m > boost {
                return Err((
                    "clock.min_mhz",
                    format!("must be in 1..={boost} (clock_mhz, the boost clock); got {m}"),
                ));
            }
        }
        if let Some(l2) = self.l2_mhz {
            if l2 == 0 || l2 > 100_000 {
                return Err((
                    "clock.l2_mhz",
                    format!("must be between 1 and 100000 (MHz); got {l2}"),
                ));
            }
        }
        if self.step_mhz == 0 || self.step_mhz > boost {
            return Err((
                "clock.step_mhz",
                format!("must be in 1..={boost}; got {}", self.step_mhz),
            ));
        }
        // At least a microsecond: the clock timeline keeps one entry per interval.
        for (key, us) in [
            ("clock.control_interval_us", self.control_interval_us),
            ("clock.window_us", self.window_us),
        ] {
            if !(us.is_finite() && (1.0..=1e6).contains(&us)) {
                return Err((
                    key,
                    format!("must be between 1 and 1000000 microseconds; got {us}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    const H100: &str = include_str!("../../../configs/hopper-h100.yaml");

    fn err(sets: &[(&str, &str)]) -> crate::config::ConfigError {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_yaml("h100", H100, &sets).unwrap_err()
    }

    /// Each bad clock or power key is reported at its path with the valid range.
    #[test]
    fn bad_clock_and_power_keys_name_their_path() {
        for (key, value, words) in [
            ("clock.fixed_mhz", "2500", "1..=1980"),
            ("clock.min_mhz", "0", "1..=1980"),
            ("clock.step_mhz", "0", "must be in"),
            ("clock.control_interval_us", "0", "microseconds"),
            ("clock.window_us", "-1", "microseconds"),
            ("clock.control_interval_us", "0.5", "between 1 and 1000000"),
            ("clock.l2_mhz", "0", "between 1 and 100000"),
            ("power.limit_watts", "-5", "positive"),
            ("power.min_mv", "1200", "boost_mv"),
            ("power.tensor_data_share", "1.5", "[0, 1]"),
            ("power.governor_data_share", "-0.1", "[0, 1]"),
            ("power.energy_pj.l2_access", "-1", "positive"),
        ] {
            let e = err(&[(key, value)]);
            assert_eq!(e.path, key, "{e}");
            assert!(e.to_string().contains(words), "{key}: {e}");
        }
        let e = err(&[("clock.min_mhz", "1980")]);
        assert_eq!(e.path, "clock.min_mhz", "{e}");
        assert!(
            e.to_string()
                .contains("power.limit_watts needs a clock range"),
            "{e}"
        );
        let e = err(&[("clock.boost", "1")]);
        assert!(e.to_string().contains("fixed_mhz"), "{e}");
    }

    /// The shipped H100 config is governed; a locked clock or the issue engine is not; `clock` can be set on a config that has no such section.
    #[test]
    fn which_configs_are_governed() {
        let ok = |sets: &[(&str, &str)], text: &str| {
            let sets: Vec<(String, String)> = sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Config::from_yaml("c", text, &sets).unwrap()
        };
        assert!(ok(&[], H100).governed());
        assert!(!ok(&[("clock.fixed_mhz", "1755")], H100).governed());
        assert!(!ok(&[("memory_engine", "issue")], H100).governed());
        assert_eq!(
            ok(&[("clock.fixed_mhz", "1755")], H100).start_mhz(),
            Some(1755)
        );
        let tiny = ok(&[("clock.fixed_mhz", "700")], crate::config::TINY_YAML);
        assert!(!tiny.governed() && tiny.power.is_none());
        assert_eq!(tiny.start_mhz(), Some(700));
    }
}
