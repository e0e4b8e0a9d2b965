//! GPU generations: the compute capability a config models (`sm.arch`), a module's `.target`,
//! whether a device of the one can run the other, and what `sm.reconvergence: auto` picks.
//!
//! The rules are the CUDA driver's (CUDA C++ Programming Guide, "Binary Compatibility" and
//! "PTX Compatibility"; PTX ISA §5 "Target ISA notes" and the `.target` directive):
//! - PTX built for a generic target `sm_XY` / `compute_XY` is JIT-compiled for any device of
//!   compute capability X.Y or newer, never for an older one;
//! - an architecture-specific target (`sm_90a`) uses features that are not forward compatible:
//!   it runs only on devices of exactly that compute capability;
//! - a family-specific target (`sm_100f`, PTX ISA 8.8) runs on the devices of its family (same
//!   major version) of that compute capability or newer.

use std::fmt;

/// A compute capability as PTX spells it: `sm_70`, `compute_90a`, `sm_100f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    /// Major × 10 + minor: 70 for 7.0, 90 for 9.0, 100 for 10.0.
    pub number: u32,
    pub variant: Variant,
}

/// The suffix of a target name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// `sm_90`: forward compatible.
    Generic,
    /// `sm_90a`: this compute capability only.
    ArchSpecific,
    /// `sm_100f`: this family from this compute capability on.
    FamilySpecific,
}

impl Arch {
    /// `sm_NN`, `sm_NNa`, `sm_NNf`, or the same with `compute_`.
    pub fn parse(s: &str) -> Option<Arch> {
        let digits = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))?;
        let (digits, variant) = match digits.as_bytes().last()? {
            b'a' => (&digits[..digits.len() - 1], Variant::ArchSpecific),
            b'f' => (&digits[..digits.len() - 1], Variant::FamilySpecific),
            _ => (digits, Variant::Generic),
        };
        if digits.len() < 2 || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let number: u32 = digits.parse().ok()?;
        (number >= 10).then_some(Arch { number, variant })
    }

    /// The major version: the family (7 for sm_70 and sm_75).
    pub fn major(self) -> u32 {
        self.number / 10
    }

    /// Whether a device of compute capability `self` runs PTX built for `target`.
    pub fn runs(self, target: Arch) -> bool {
        match target.variant {
            Variant::Generic => target.number <= self.number,
            Variant::ArchSpecific => target.number == self.number,
            Variant::FamilySpecific => {
                target.major() == self.major() && target.number <= self.number
            }
        }
    }

    /// Independent thread scheduling: Volta (compute capability 7.0) and later.
    pub fn has_independent_thread_scheduling(self) -> bool {
        self.number >= 70
    }
}

impl<'de> serde::Deserialize<'de> for Arch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Arch, D::Error> {
        let s = String::deserialize(d)?;
        Arch::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{s}` is not a compute capability; write it as PTX does, e.g. sm_20, sm_70, sm_80, sm_90"
            ))
        })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            Variant::Generic => "",
            Variant::ArchSpecific => "a",
            Variant::FamilySpecific => "f",
        };
        write!(f, "sm_{}{suffix}", self.number)
    }
}

/// How `sm.reconvergence: auto` decides, as the CUDA toolchain does (NVIDIA's Volta tuning
/// guide, "Independent Thread Scheduling Compatibility"): code built for `sm_70` or newer and
/// run on a Volta-or-later GPU gets independent thread scheduling (convergence barriers);
/// code built for an older target keeps pre-Volta, warp-synchronous scheduling (the token
/// stack), and so does every kernel on a pre-Volta GPU.
pub fn auto_uses_convergence_barriers(device: Arch, target: Arch) -> bool {
    device.has_independent_thread_scheduling() && target.has_independent_thread_scheduling()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Arch {
        Arch::parse(s).unwrap_or_else(|| panic!("{s} parses"))
    }

    #[test]
    fn parses_every_spelling() {
        assert_eq!(
            a("sm_70"),
            Arch {
                number: 70,
                variant: Variant::Generic
            }
        );
        assert_eq!(a("compute_52"), a("sm_52"));
        assert_eq!(a("sm_90a").variant, Variant::ArchSpecific);
        assert_eq!(
            a("sm_100f"),
            Arch {
                number: 100,
                variant: Variant::FamilySpecific
            }
        );
        for bad in [
            "", "sm_", "sm_7", "sm_x0", "sm_70b", "gfx90a", "sm_1000", "sm_09",
        ] {
            assert_eq!(Arch::parse(bad), None, "{bad}");
        }
        assert_eq!(a("sm_90a").to_string(), "sm_90a");
    }

    /// The driver's rules: generic targets run forward, `a` targets on their own compute
    /// capability only, `f` targets within their family.
    #[test]
    fn compatibility() {
        assert!(a("sm_70").runs(a("sm_52")));
        assert!(a("sm_70").runs(a("sm_70")));
        assert!(!a("sm_70").runs(a("sm_80")));
        assert!(!a("sm_20").runs(a("sm_52")));
        assert!(a("sm_90").runs(a("sm_90a")));
        assert!(!a("sm_100").runs(a("sm_90a")));
        assert!(!a("sm_80").runs(a("sm_90a")));
        assert!(a("sm_103").runs(a("sm_100f")));
        assert!(!a("sm_120").runs(a("sm_100f")));
        assert!(!a("sm_100").runs(a("sm_103f")));
    }

    #[test]
    fn auto_policy_follows_target_and_device() {
        assert!(auto_uses_convergence_barriers(a("sm_70"), a("sm_70")));
        assert!(auto_uses_convergence_barriers(a("sm_90"), a("sm_80")));
        // compute_60 code on Volta keeps pre-Volta scheduling.
        assert!(!auto_uses_convergence_barriers(a("sm_70"), a("sm_60")));
        assert!(!auto_uses_convergence_barriers(a("sm_20"), a("sm_52")));
    }
}
