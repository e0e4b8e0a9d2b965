//! Operations blocked at a component, in the order they blocked, and when they were last
//! scanned. A blocked operation can proceed only once what it waits on has changed
//! (`hierarchy::Wait`); each entry keeps what its operation waits on, resolved to a set
//! (`WaitOn`), and the count of changes it saw, so that a retry pass tells which operations
//! may proceed without touching the operations themselves; the list remembers the count over
//! all it may wait on at its last scan (`stamp`), so that a pass skips a list in which nothing
//! can have changed.

/// What a blocked operation waits on, resolved: the L1 set of its line (`set`), the SM's
/// MSHRs and bank locks, one set of one L2 slice, or its L1 set or any slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WaitOn {
    Nothing,
    L1Set(usize),
    SmResources,
    L2Set { slice: u32, set: usize },
    L1SetOrAnySlice(usize),
}

/// One blocked operation: its id, what it waits on and the change count it saw.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub id: u32,
    /// The operation's SM (whose L1 and resources `on` may name).
    pub sm: u32,
    pub on: WaitOn,
    pub seen: u64,
}

pub(super) struct Blocked {
    pub entries: Vec<Entry>,
    /// The change count of everything the list's operations may wait on, read before its
    /// last scan (`u64::MAX`: never scanned). Read before, not after: an operation the scan
    /// passed over may be unblocked by one the scan ran later, and must be looked at again.
    scanned: u64,
    /// Some operation in the list may wait on any L2 slice (`Wait::L1SetOrAnySlice`).
    pub any_slice: bool,
    /// The L2 slices the list's operations wait on (`WaitOn::L2Set`), each once; cleared when
    /// the list empties (a slice no longer waited on only costs a scan).
    pub slices: Vec<u32>,
}

impl Blocked {
    pub fn new() -> Blocked {
        Blocked {
            entries: Vec::new(),
            scanned: u64::MAX,
            any_slice: false,
            slices: Vec::new(),
        }
    }

    pub fn push(&mut self, e: Entry) {
        self.note(e.on);
        self.entries.push(e);
    }

    /// Record what an entry (new, or retried and still blocked) waits on.
    pub fn note(&mut self, on: WaitOn) {
        match on {
            WaitOn::L1SetOrAnySlice(_) => self.any_slice = true,
            WaitOn::L2Set { slice, .. } if !self.slices.contains(&slice) => self.slices.push(slice),
            _ => {}
        }
    }

    /// Remove entry `i` (its operation proceeded).
    pub fn remove(&mut self, i: usize) {
        self.entries.remove(i);
        if self.entries.is_empty() {
            self.slices.clear();
            self.any_slice = false;
        }
    }

    /// Whether a scan at change count `stamp` may find an operation to retry; if so, the
    /// scan is recorded as made at `stamp`.
    pub fn needs_scan(&mut self, stamp: u64) -> bool {
        if self.entries.is_empty() || stamp == self.scanned {
            return false;
        }
        self.scanned = stamp;
        true
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
