//! A config meets a module: the generation check (`sm.arch` against the module's `.target`),
//! the units the module needs and the config has, and `sm.reconvergence: auto` decided.
//!
//! A GPU refuses a module built for a newer generation (the driver reports
//! `CUDA_ERROR_NO_BINARY_FOR_GPU` / "no kernel image is available"), so gpusim refuses it too
//! instead of running instructions the modelled GPU does not have.

use super::arch::Arch;
use super::{Config, ReconvergenceSetting};
use gpusim_isa::{Module, Op, Span};

/// Why a config cannot run a module (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct TargetError {
    /// The module's PTX file.
    pub file: String,
    pub message: String,
}

/// A unit of the SM that only some generations have, and the config section describing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Wgmma,
    Tma,
    Cluster,
}

impl Unit {
    fn key(self) -> &'static str {
        match self {
            Unit::Wgmma => "sm.wgmma",
            Unit::Tma => "sm.tma",
            Unit::Cluster => "sm.cluster",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Unit::Wgmma => "warpgroup MMA (wgmma)",
            Unit::Tma => "a tensor memory accelerator (TMA: cp.async.bulk)",
            Unit::Cluster => "thread-block clusters",
        }
    }

    /// The unit an instruction needs, if it needs one of these.
    fn of(op: &Op) -> Option<Unit> {
        match op {
            Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
                Some(Unit::Wgmma)
            }
            Op::CpAsyncBulk { dir, multicast, .. } => {
                if matches!(dir, gpusim_isa::BulkDir::SharedToCluster) || multicast.is_some() {
                    Some(Unit::Cluster)
                } else {
                    Some(Unit::Tma)
                }
            }
            Op::CpAsyncBulkTensor { .. } => Some(Unit::Tma),
            Op::Mapa { .. } | Op::BarrierCluster { .. } => Some(Unit::Cluster),
            Op::MbarArrive { cluster: true, .. } | Op::MbarTx { cluster: true, .. } => {
                Some(Unit::Cluster)
            }
            _ => None,
        }
    }

    fn present(self, cfg: &Config) -> bool {
        match self {
            Unit::Wgmma => cfg.sm.wgmma.is_some(),
            Unit::Tma => cfg.sm.tma.is_some(),
            Unit::Cluster => cfg.sm.cluster.is_some(),
        }
    }
}

impl Config {
    /// This config for running `module`: the module's `.target` must be one a GPU of
    /// `sm.arch` runs, every unit its instructions need must be configured, and
    /// `sm.reconvergence: auto` becomes the policy for this target.
    pub fn for_module(&self, module: &Module) -> Result<Config, TargetError> {
        let err = |message: String| TargetError {
            file: module.file.clone(),
            message,
        };
        let target = Arch::parse(&module.target).ok_or_else(|| {
            err(format!(
                "`.target {}` names no GPU generation gpusim knows (sm_XY, sm_XYa, sm_XYf)",
                module.target
            ))
        })?;
        let device = self.sm.arch;
        if !device.runs(target) {
            return Err(err(format!(
                "built for .target {target}, which config `{}` (sm.arch: {device}) cannot run: {}; \
                 use a config of that generation, or override the generation with --set sm.arch={}",
                self.name,
                why_not(device, target),
                Arch { variant: super::arch::Variant::Generic, ..target }
            )));
        }
        if let Some(m) = self.missing_unit(module) {
            return Err(err(m));
        }
        let mut bound = self.clone();
        bound.sm.reconvergence = self.sm.reconvergence_setting.resolve(device, target);
        Ok(bound)
    }

    /// What the first instruction needing a unit this config lacks needs, with its line.
    pub fn missing_unit(&self, module: &Module) -> Option<String> {
        first_missing_unit(self, module).map(|(unit, span)| {
            format!(
                "line {}: the kernel uses {}, which config `{}` does not model (no `{}` section)",
                span.line,
                unit.what(),
                self.name,
                unit.key()
            )
        })
    }

    /// Whether the policy was chosen by `sm.reconvergence: auto`.
    pub fn reconvergence_is_auto(&self) -> bool {
        self.sm.reconvergence_setting == ReconvergenceSetting::Auto
    }

    /// A launch with clusters of more than one CTA needs `sm.cluster`.
    pub fn check_cluster_launch(&self, cluster: [u32; 3]) -> Result<(), String> {
        if cluster.iter().product::<u32>() > 1 && self.sm.cluster.is_none() {
            return Err(format!(
                "clusters of {cluster:?} CTAs need thread-block clusters, which config `{}` does not model (no `sm.cluster` section)",
                self.name
            ));
        }
        Ok(())
    }
}

fn why_not(device: Arch, target: Arch) -> String {
    use super::arch::Variant;
    match target.variant {
        Variant::ArchSpecific => format!(
            "an `a` target runs only on GPUs of exactly compute capability {}.{}",
            target.major(),
            target.number % 10
        ),
        Variant::FamilySpecific if target.major() != device.major() => format!(
            "an `f` target runs only on GPUs of its family (compute capability {}.x)",
            target.major()
        ),
        _ => "a GPU does not run code built for a newer generation".to_string(),
    }
}

/// The first instruction (in file order) needing a unit the config lacks.
fn first_missing_unit(cfg: &Config, module: &Module) -> Option<(Unit, Span)> {
    let mut first: Option<(Unit, Span)> = None;
    for f in &module.functions {
        for inst in &f.body {
            let Some(unit) = Unit::of(&inst.op) else {
                continue;
            };
            if !unit.present(cfg) && first.is_none_or(|(_, s)| inst.span.start < s.start) {
                first = Some((unit, inst.span));
            }
        }
        let needs_clusters = f.req_cluster.is_some_and(|c| c.iter().product::<u32>() > 1);
        if needs_clusters
            && cfg.sm.cluster.is_none()
            && first.is_none_or(|(_, s)| f.span.start < s.start)
        {
            first = Some((Unit::Cluster, f.span));
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(target: &str, body: &str) -> Module {
        let src = format!(
            ".version 8.0\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n{body}\nret;\n}}\n"
        );
        gpusim_isa::parse_module("k.ptx", &src).expect("parses")
    }

    fn config(arch: &str, reconvergence: &str) -> Config {
        Config::from_yaml(
            "t",
            super::super::TINY_YAML,
            &[
                ("sm.arch".into(), arch.into()),
                ("sm.reconvergence".into(), reconvergence.into()),
            ],
        )
        .expect("valid")
    }

    #[test]
    fn newer_target_is_refused_naming_both() {
        let e = config("sm_20", "auto")
            .for_module(&module("sm_90a", ""))
            .unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("k.ptx: "), "{m}");
        assert!(m.contains("sm_90a") && m.contains("sm_20"), "{m}");
        assert!(m.contains("--set sm.arch=sm_90"), "{m}");
    }

    #[test]
    fn auto_decides_by_target() {
        use crate::config::ReconvergenceKind as K;
        let cfg = config("sm_70", "auto");
        let old = cfg.for_module(&module("sm_52", "")).unwrap();
        assert_eq!(old.sm.reconvergence, K::TokenStack);
        let new = cfg.for_module(&module("sm_70", "")).unwrap();
        assert_eq!(new.sm.reconvergence, K::ConvergenceBarrier);
        assert!(new.reconvergence_is_auto());
        // A fixed policy stays what it says.
        let fixed = config("sm_70", "pdom-stack")
            .for_module(&module("sm_70", ""))
            .unwrap();
        assert_eq!(fixed.sm.reconvergence, K::PdomStack);
    }

    #[test]
    fn missing_units_are_named_with_the_line() {
        let mut cfg = config("sm_90", "auto");
        cfg.sm.wgmma = None;
        let e = cfg
            .for_module(&module("sm_90a", "wgmma.fence.sync.aligned;"))
            .unwrap_err();
        assert!(
            e.message.contains("line 6") && e.message.contains("sm.wgmma"),
            "{e}"
        );
    }
}
