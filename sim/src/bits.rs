//! A fixed-size set of small indices as bits: the memory system's sets of components with
//! work (`mem::system::active`), an SM's resident and parked warp slots (`core::sm`). Walks
//! visit set bits by index without touching the indexed objects, which is the point: the
//! objects are large and reading one costs a host cache line.

pub struct BitSet {
    words: Vec<u64>,
    n: usize,
}

impl BitSet {
    pub fn new(n: usize) -> BitSet {
        BitSet {
            words: vec![0; n.div_ceil(64)],
            n,
        }
    }

    #[inline]
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn clear_all(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// The first set index in `from..end`.
    #[inline]
    pub fn next_in(&self, from: usize, end: usize) -> Option<usize> {
        let end = end.min(self.n);
        if from >= end {
            return None;
        }
        let mut w = from / 64;
        let mut bits = self.words[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return (i < end).then_some(i);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = self.words[w];
        }
    }

    /// The first set index at or after `from`.
    #[inline]
    pub fn next(&self, from: usize) -> Option<usize> {
        self.next_in(from, self.n)
    }

    pub fn len(&self) -> usize {
        self.n
    }

    /// Visit the set bits as they stand now, in order, clearing each one `keep` rejects (a
    /// walk that changes no other bit, so it need not read the set afresh).
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        for (w, word) in self.words.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !keep(w * 64 + b) {
                    *word &= !(1 << b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BitSet;

    #[test]
    fn set_clear_contains_and_empty() {
        let mut s = BitSet::new(130);
        assert!(s.is_empty());
        s.set(0);
        s.set(129);
        assert!(s.contains(129) && !s.contains(64) && !s.is_empty());
        s.clear(129);
        assert!(!s.contains(129) && s.contains(0));
        s.clear_all();
        assert!(s.is_empty());
    }
}
