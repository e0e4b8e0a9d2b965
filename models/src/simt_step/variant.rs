//! The SIMT-Step instantiations (paper Tab. 1, §3–§4; digest §1.6): which execution mode —
//! independent, synchronous or collective — each instruction class gets. Owns the variant
//! list and its strength order.

use std::fmt;

/// How an instruction class executes (paper §3: "independently, synchronously,
/// collectively").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// T-* rules: one thread at a time, any interleaving.
    Independent,
    /// Arrive/Execute rules: all active threads of the DB arrive, then each executes alone.
    Synchronous,
    /// G-COLLECTIVE-* rules: one atomic step for every active thread of the DB.
    Collective,
}

/// How subgroup operations execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SgMode {
    /// G-COLLECTIVE-SUBGROUP with `Align`, which includes `db.U = ∅` (paper §4.3).
    Collective,
    /// Paper §4.4 "Speculative Subgroup Operations": fire with the threads present, prune
    /// the run if an unknown thread later joins.
    Speculative,
}

/// The executable SIMT-Step variants, declared strongest first. The paper's sixth, Symb
/// (symbolic SG ops), is not implemented: see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// Collective Memory.
    Cm,
    /// Synchronous Memory.
    Sm,
    /// Synchronous Control Flow.
    Scf,
    /// Synchronous SG Op.
    Sso,
    /// Speculative SG Op.
    Spec,
}

impl Variant {
    /// Strongest to weakest: paper Tab. 1 lists the models in this order and §1.2 states
    /// they "can be ordered from stronger (more synchronization) to weaker (more
    /// independence)"; Tab. 1's caption calls the first the strongest and the last the
    /// weakest. Each allows every outcome of the ones before it.
    pub const ALL: [Variant; 5] = [
        Variant::Cm,
        Variant::Sm,
        Variant::Scf,
        Variant::Sso,
        Variant::Spec,
    ];

    /// The paper's abbreviation.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Cm => "CM",
            Variant::Sm => "SM",
            Variant::Scf => "SCF",
            Variant::Sso => "SSO",
            Variant::Spec => "Spec",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Loads and stores (Tab. 1 / digest §1.6 table).
    pub fn memory(self) -> Mode {
        match self {
            Variant::Cm => Mode::Collective,
            Variant::Sm => Mode::Synchronous,
            Variant::Scf | Variant::Sso | Variant::Spec => Mode::Independent,
        }
    }

    /// Branches, returns and labels: collective up to SCF, independent from SSO on (§4.3).
    pub fn control(self) -> Mode {
        match self {
            Variant::Cm | Variant::Sm | Variant::Scf => Mode::Collective,
            Variant::Sso | Variant::Spec => Mode::Independent,
        }
    }

    pub fn subgroup(self) -> SgMode {
        match self {
            Variant::Spec => SgMode::Speculative,
            _ => SgMode::Collective,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
