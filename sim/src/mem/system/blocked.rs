//! Operations blocked at a component, in the order they blocked, and when they were last
//! scanned. A blocked operation can proceed only once what it waits on has changed
//! (`hierarchy::Wait`); each operation remembers the count of changes it saw (`MemOp::seen`),
//! and the list remembers the count over all it may wait on at its last scan (`stamp`), so
//! that a retry pass skips a list in which nothing can have changed without looking at its
//! operations.

pub(super) struct Blocked {
    pub ids: Vec<u32>,
    /// The change count of everything the list's operations may wait on, read before its
    /// last scan (`u64::MAX`: never scanned). Read before, not after: an operation the scan
    /// passed over may be unblocked by one the scan ran later, and must be looked at again.
    scanned: u64,
    /// Some operation in the list may wait on any L2 slice (`Wait::L1SetOrAnySlice`).
    pub any_slice: bool,
}

impl Blocked {
    pub fn new() -> Blocked {
        Blocked {
            ids: Vec::new(),
            scanned: u64::MAX,
            any_slice: false,
        }
    }

    pub fn push(&mut self, id: u32, any_slice: bool) {
        self.ids.push(id);
        self.any_slice |= any_slice;
    }

    /// Whether a scan at change count `stamp` may find an operation to retry; if so, the
    /// scan is recorded as made at `stamp`.
    pub fn needs_scan(&mut self, stamp: u64) -> bool {
        if self.ids.is_empty() || stamp == self.scanned {
            return false;
        }
        self.scanned = stamp;
        true
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}
