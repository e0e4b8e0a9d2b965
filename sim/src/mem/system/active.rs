//! The components of one kind that may have work: a bit set the cycle walks instead of every
//! component. A bit is set whenever something is put into the component (a queue, a link,
//! the blocked list, a DRAM request) and cleared only when the component is found empty
//! (`MemorySystem::refresh_wake`, through `Active::retain`), so the set always covers every
//! component with work. A phase visits the set bits in its order (by index, or rotating from
//! an index), reading the set afresh at each step: a component that gets work during the
//! phase is visited if its turn is still ahead, as it was when the phase visited every
//! component (an empty one is a no-op).

pub(super) use crate::bits::BitSet as Active;

/// A walk over the set bits in the rotating order `start, start + 1, …, n − 1, 0, …,
/// start − 1`, the set read afresh at each step (`Rotation::next`).
pub(super) struct Rotation {
    start: usize,
    at: usize,
    wrapped: bool,
}

impl Rotation {
    pub fn from(start: usize) -> Rotation {
        Rotation {
            start,
            at: start,
            wrapped: false,
        }
    }

    #[inline]
    pub fn next(&mut self, set: &Active) -> Option<usize> {
        if !self.wrapped {
            if let Some(i) = set.next_in(self.at, set.len()) {
                self.at = i + 1;
                return Some(i);
            }
            self.wrapped = true;
            self.at = 0;
        }
        let i = set.next_in(self.at, self.start)?;
        self.at = i + 1;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(set: &Active) -> Vec<usize> {
        let mut v = Vec::new();
        let mut i = 0;
        while let Some(k) = set.next(i) {
            v.push(k);
            i = k + 1;
        }
        v
    }

    #[test]
    fn walks_set_bits_in_order_across_words() {
        let mut a = Active::new(200);
        for i in [0, 5, 63, 64, 130, 199] {
            a.set(i);
        }
        a.retain(|i| i != 5);
        assert_eq!(walk(&a), [0, 63, 64, 130, 199]);
        assert_eq!(a.next_in(65, 130), None);
        assert_eq!(a.next_in(65, 131), Some(130));
    }

    #[test]
    fn retain_visits_every_set_bit_and_clears_the_rejected() {
        let mut a = Active::new(130);
        for i in [2, 63, 64, 100, 129] {
            a.set(i);
        }
        let mut seen = Vec::new();
        a.retain(|i| {
            seen.push(i);
            i % 2 == 0
        });
        assert_eq!(seen, [2, 63, 64, 100, 129]);
        assert_eq!(walk(&a), [2, 64, 100]);
    }

    #[test]
    fn rotation_wraps_once_and_sees_bits_set_ahead() {
        let mut a = Active::new(70);
        for i in [1, 3, 66, 69] {
            a.set(i);
        }
        let mut r = Rotation::from(66);
        let mut seen = vec![r.next(&a).unwrap()];
        // Set during the walk: 68 (ahead) is visited; once 69 is, 67 (behind) is not and 2
        // (ahead, after the wrap) is.
        a.set(68);
        while let Some(i) = r.next(&a) {
            seen.push(i);
            if i == 69 {
                a.set(67);
                a.set(2);
            }
        }
        assert_eq!(seen, [66, 68, 69, 1, 2, 3]);
    }
}
