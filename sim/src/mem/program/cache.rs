//! The formal cache of Habermaier §4.2 (digest §2.2): a list of lines with pins, reservation
//! and eviction classes. Decisions (digest §2.8 gap 1): lines are keyed by the ALIGNED line
//! address (`line_size`, a power of two) and hold `line_size` bytes with per-byte present and
//! dirty masks; a request must lie inside one line. `valid` = every byte present; `dirty` = some
//! byte dirty. A line is *cached* for `isCached`/`reserve` when valid or reserved for a fill
//! (`pending`); a partial line left by a write-allocate may be reserved to be filled, and
//! `update` fills only the bytes not present (newer written data wins, as in the paper).
//! `eligible` = the set of the address (`sets` x `ways`; `sets = 1` is fully associative).
//! `canEvict` = clean and unpinned, First lines before Normal; ties go to the least recently
//! used line (an LRU stamp per line), so every choice is deterministic.

pub type MemOpId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvClass {
    First,
    Normal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub addr: Option<u64>,
    pub data: Vec<u8>,
    pub present: Vec<bool>,
    pub dirty_bytes: Vec<bool>,
    pub pending: bool,
    pub pins: Vec<MemOpId>,
    pub class: EvClass,
    pub stamp: u64,
}

impl Line {
    fn init(size: usize) -> Line {
        Line {
            addr: None,
            data: vec![0; size],
            present: vec![false; size],
            dirty_bytes: vec![false; size],
            pending: false,
            pins: Vec::new(),
            class: EvClass::Normal,
            stamp: 0,
        }
    }
    pub fn valid(&self) -> bool {
        self.present.iter().all(|&p| p)
    }
    pub fn dirty(&self) -> bool {
        self.dirty_bytes.iter().any(|&d| d)
    }
    pub fn pinned(&self) -> bool {
        !self.pins.is_empty()
    }
    fn pin(&mut self, mid: MemOpId) {
        if !self.pins.contains(&mid) {
            self.pins.push(mid);
        }
    }
}

/// ⊥ of the paper: a misuse that leaves the program stuck.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("the cache has no lines")]
    NoLines,
    #[error("address {0:#x} is not cached")]
    NotCached(u64),
    #[error("address {0:#x} is already cached")]
    AlreadyCached(u64),
    #[error("access {addr:#x}+{size} crosses a line boundary")]
    Span { addr: u64, size: usize },
}

/// `Wait` (the paper's ε): retry in a later micro step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    Done(T),
    Wait,
}

#[derive(Clone, Debug)]
pub struct Cache {
    pub line_size: usize,
    pub sets: usize,
    pub ways: usize,
    lines: Vec<Line>,
    clock: u64,
}

type R<T> = Result<T, CacheError>;

impl Cache {
    pub fn new(line_size: usize, sets: usize, ways: usize) -> Cache {
        assert!(
            line_size.is_power_of_two(),
            "line size must be a power of two"
        );
        Cache {
            line_size,
            sets: sets.max(1),
            ways,
            lines: vec![Line::init(line_size); sets.max(1) * ways],
            clock: 0,
        }
    }

    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    pub fn line_addr(&self, a: u64) -> u64 {
        a & !(self.line_size as u64 - 1)
    }

    /// The line holding `a`, reserved, partial or valid.
    pub fn line(&self, a: u64) -> Option<&Line> {
        self.find(a).map(|i| &self.lines[i])
    }

    fn find(&self, a: u64) -> Option<usize> {
        let la = self.line_addr(a);
        self.eligible(la).find(|&i| self.lines[i].addr == Some(la))
    }

    fn eligible(&self, la: u64) -> std::ops::Range<usize> {
        let set = (la / self.line_size as u64) as usize % self.sets;
        set * self.ways..(set + 1) * self.ways
    }

    fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.lines[i].stamp = self.clock;
    }

    fn offset(&self, a: u64, size: usize) -> R<usize> {
        let off = (a - self.line_addr(a)) as usize;
        if off + size > self.line_size {
            return Err(CacheError::Span { addr: a, size });
        }
        Ok(off)
    }

    /// `isCached(cls, a)`: valid, or reserved and awaiting its fill.
    pub fn is_cached(&self, a: u64) -> bool {
        self.line(a).is_some_and(|l| l.valid() || l.pending)
    }

    /// `canEvict`: clean, unpinned, and First before Normal within the line's set.
    pub fn can_evict(&self, i: usize) -> bool {
        let l = &self.lines[i];
        let free = |l: &Line| l.addr.is_some() && !l.dirty() && !l.pinned();
        if !free(l) {
            return false;
        }
        l.class == EvClass::First
            || !self
                .eligible(l.addr.unwrap_or(0))
                .any(|j| free(&self.lines[j]) && self.lines[j].class == EvClass::First)
    }

    /// The victim for `a`'s set: an evictable line, least recently used first.
    fn victim(&self, la: u64) -> Option<usize> {
        self.eligible(la)
            .filter(|&i| self.can_evict(i))
            .min_by_key(|&i| self.lines[i].stamp)
    }

    /// `reserve(cls, a, mid)`: a clean, invalid, Normal line pinned by `mid`.
    pub fn reserve(&mut self, a: u64, mid: Option<MemOpId>) -> R<Outcome<()>> {
        if self.ways == 0 {
            return Err(CacheError::NoLines);
        }
        if self.is_cached(a) {
            return Err(CacheError::AlreadyCached(a));
        }
        let la = self.line_addr(a);
        let i = match self.find(a) {
            // A partial line left by a write-allocate: keep its bytes, await the fill.
            Some(i) => i,
            None => {
                let unused = self.eligible(la).find(|&i| self.lines[i].addr.is_none());
                match unused.or_else(|| self.victim(la)) {
                    Some(i) => {
                        self.lines[i] = Line::init(self.line_size);
                        self.lines[i].addr = Some(la);
                        i
                    }
                    None => return Ok(Outcome::Wait),
                }
            }
        };
        if let Some(m) = mid {
            self.lines[i].pending = true;
            self.lines[i].pin(m);
        }
        self.touch(i);
        Ok(Outcome::Done(()))
    }

    /// `read(cls, a, mid)`: the whole line's bytes if valid (own pin released), else pin and `None`.
    pub fn read(&mut self, a: u64, mid: MemOpId) -> R<Option<Vec<u8>>> {
        let i = self.find(a).ok_or(CacheError::NotCached(a))?;
        let l = &mut self.lines[i];
        if l.valid() {
            l.pins.retain(|&p| p != mid);
            let d = l.data.clone();
            self.touch(i);
            Ok(Some(d))
        } else {
            // Habermaier §4.4 op2: the pin is kept although the op yields.
            l.pin(mid);
            Ok(None)
        }
    }

    /// `write(cls, a, cw)` for the bytes at `a`; write-allocates on a miss (may Wait).
    pub fn write(&mut self, a: u64, bytes: &[u8]) -> R<Outcome<()>> {
        let off = self.offset(a, bytes.len())?;
        let mut data = vec![0; self.line_size];
        let mut mask = vec![false; self.line_size];
        data[off..off + bytes.len()].copy_from_slice(bytes);
        mask[off..off + bytes.len()]
            .iter_mut()
            .for_each(|m| *m = true);
        self.write_masked(self.line_addr(a), &data, &mask)
    }

    /// `write` of the masked bytes of a whole line (the silent write-back uses this).
    pub fn write_masked(&mut self, la: u64, data: &[u8], mask: &[bool]) -> R<Outcome<()>> {
        if self.ways == 0 {
            return Err(CacheError::NoLines);
        }
        if self.find(la).is_none() {
            if let Outcome::Wait = self.reserve(la, None)? {
                return Ok(Outcome::Wait);
            }
        }
        let i = self.find(la).ok_or(CacheError::NotCached(la))?;
        let l = &mut self.lines[i];
        for k in (0..data.len()).filter(|&k| mask[k]) {
            // "same data => unchanged", per byte: an equal present byte stays clean.
            if !(l.present[k] && l.data[k] == data[k]) {
                l.data[k] = data[k];
                l.present[k] = true;
                l.dirty_bytes[k] = true;
            }
        }
        self.touch(i);
        Ok(Outcome::Done(()))
    }

    /// `update(cls, a, line)`: fill the bytes not present; pins are NOT removed.
    pub fn update(&mut self, a: u64, line: &[u8]) -> R<()> {
        let i = self.find(a).ok_or(CacheError::NotCached(a))?;
        let l = &mut self.lines[i];
        for ((d, p), &v) in l.data.iter_mut().zip(l.present.iter_mut()).zip(line) {
            if !*p {
                *d = v;
                *p = true;
            }
        }
        l.pending = false;
        self.touch(i);
        Ok(())
    }

    /// Explicit `evict`: ignores classes; Wait while dirty or pinned; no-op if absent.
    pub fn evict(&mut self, a: u64) -> R<Outcome<()>> {
        self.drop_line(a, false)
    }

    /// `discard`: like evict, but drops dirty data too.
    pub fn discard(&mut self, a: u64) -> R<Outcome<()>> {
        self.drop_line(a, true)
    }

    fn drop_line(&mut self, a: u64, dirty_ok: bool) -> R<Outcome<()>> {
        if self.ways == 0 {
            return Err(CacheError::NoLines);
        }
        let Some(i) = self.find(a) else {
            return Ok(Outcome::Done(()));
        };
        let l = &self.lines[i];
        if l.pinned() || (l.dirty() && !dirty_ok) {
            return Ok(Outcome::Wait);
        }
        self.lines[i] = Line::init(self.line_size);
        Ok(Outcome::Done(()))
    }

    /// `classify(cls, a, ec)`: ⊥ if the line is absent (digest §2.8 gap 5).
    pub fn classify(&mut self, a: u64, ec: EvClass) -> R<()> {
        let i = self.find(a).ok_or(CacheError::NotCached(a))?;
        self.lines[i].class = ec;
        Ok(())
    }

    /// Silent `evict_X` (digest §2.6): only where `canEvict` holds. Returns whether it fired.
    pub fn evict_silent(&mut self, la: u64) -> bool {
        match self.find(la) {
            Some(i) if self.can_evict(i) => {
                self.lines[i] = Line::init(self.line_size);
                true
            }
            _ => false,
        }
    }

    /// After a write-back: the line becomes clean; pins and class are unchanged.
    pub fn mark_clean(&mut self, la: u64) {
        if let Some(i) = self.find(la) {
            self.lines[i]
                .dirty_bytes
                .iter_mut()
                .for_each(|d| *d = false);
        }
    }
}
