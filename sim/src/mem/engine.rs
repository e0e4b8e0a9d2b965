//! The memory system a run uses (`memory_engine`), owned by the run so that its L2 persists
//! across the run's launches: the programs run at issue over bandwidth calendars
//! (`hierarchy::Backend`), or the component memory system (`system::MemorySystem`).

use crate::config::{Config, MemoryEngineKind};
use crate::mem::hierarchy::Backend;
use crate::mem::system::MemorySystem;

pub enum MemoryEngine {
    Issue(Box<Backend>),
    Components(Box<MemorySystem>),
}

impl MemoryEngine {
    /// A cold memory system of the kind `cfg` names.
    pub fn new(cfg: &Config) -> MemoryEngine {
        match cfg.memory_engine {
            MemoryEngineKind::Issue => MemoryEngine::Issue(Box::new(Backend::new(cfg))),
            MemoryEngineKind::Components => {
                MemoryEngine::Components(Box::new(MemorySystem::new(cfg)))
            }
        }
    }

    /// The L2 slices (and, at issue, the calendars): the end-of-launch write-back, the host
    /// sync, the per-slice and per-channel bytes.
    pub fn backend(&mut self) -> &mut Backend {
        match self {
            MemoryEngine::Issue(b) => b,
            MemoryEngine::Components(m) => m.backend(),
        }
    }

    /// A new launch: idle links, queues and servers; the L2's contents stay.
    pub fn new_launch(&mut self) {
        match self {
            MemoryEngine::Issue(b) => b.new_launch(),
            MemoryEngine::Components(m) => m.new_launch(),
        }
    }

    pub fn system(&mut self) -> Option<&mut MemorySystem> {
        match self {
            MemoryEngine::Issue(_) => None,
            MemoryEngine::Components(m) => Some(m),
        }
    }
}
