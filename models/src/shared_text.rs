//! Text that shares its tail with the text before it: the state traces of the token-stack
//! model and of the simulator (`α=… δ=… stack=…`) render the stack top first, so consecutive
//! states of one warp differ in their first entries and share the rest. Kept as plain strings, a
//! trace of a recursion `d` calls deep holds O(d) bytes per step, O(d²) in all (issue 11: 4.5 GB
//! for `gpusim check` at depth 2000). Here each text holds only the part that differs from the
//! previous one and points into it for the rest, so a trace takes memory linear in its steps.
//!
//! A `SharedText` is a chain: its own head, then the text of an earlier `SharedText` from some
//! byte on. Chains are normalised when built (the rest starts inside the next node's own head),
//! so reading a text visits no node that contributes nothing.

use std::fmt;
use std::sync::Arc;

/// One piece of text: its own bytes, then the rest of an earlier text from a byte offset.
#[derive(Clone)]
pub struct SharedText(Arc<Node>);

struct Node {
    head: Box<str>,
    rest: Option<(SharedText, usize)>,
    len: usize,
}

impl Drop for Node {
    // Long chains are dropped iteratively (a recursive drop could overflow the stack).
    fn drop(&mut self) {
        let mut next = self.rest.take();
        while let Some((t, _)) = next {
            match Arc::try_unwrap(t.0) {
                Ok(mut n) => next = n.rest.take(),
                Err(_) => break,
            }
        }
    }
}

impl SharedText {
    /// A text of its own.
    pub fn new(s: String) -> SharedText {
        let len = s.len();
        SharedText(Arc::new(Node {
            head: s.into_boxed_str(),
            rest: None,
            len,
        }))
    }

    /// The text `s`, sharing its longest common suffix with `prev` (whose full text is
    /// `prev_text`).
    fn after(prev: &SharedText, prev_text: &str, s: String) -> SharedText {
        let common = common_suffix(s.as_bytes(), prev_text.as_bytes());
        let mut cut = s.len() - common;
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        let shared = s.len() - cut;
        if shared == 0 {
            return SharedText::new(s);
        }
        let (mut node, mut skip) = (prev.clone(), prev_text.len() - shared);
        while skip >= node.0.head.len() {
            match &node.0.rest {
                Some((next, from)) => {
                    skip = skip - node.0.head.len() + from;
                    node = next.clone();
                }
                None => break,
            }
        }
        SharedText(Arc::new(Node {
            head: s[..cut].into(),
            rest: Some((node, skip)),
            len: s.len(),
        }))
    }

    pub fn len(&self) -> usize {
        self.0.len
    }

    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The bytes this text holds itself (not shared with earlier texts).
    pub fn own_bytes(&self) -> usize {
        self.0.head.len()
    }

    /// The text in pieces, in order.
    pub fn pieces(&self) -> Pieces<'_> {
        Pieces {
            node: Some((self, 0)),
            left: self.0.len,
        }
    }

    pub fn contains(&self, pat: &str) -> bool {
        self.to_string().contains(pat)
    }
}

/// The pieces of a `SharedText`.
pub struct Pieces<'a> {
    node: Option<(&'a SharedText, usize)>,
    left: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        while self.left > 0 {
            let (t, skip) = self.node?;
            let head = &t.0.head[skip.min(t.0.head.len())..];
            let piece = &head[..head.len().min(self.left)];
            self.node = t.0.rest.as_ref().map(|(n, from)| (n, *from));
            self.left -= piece.len();
            if !piece.is_empty() {
                return Some(piece);
            }
        }
        None
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in self.pieces() {
            f.write_str(p)?;
        }
        Ok(())
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

/// The length of the longest common suffix of `a` and `b` (slices compared a block at a
/// time).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let max = a.len().min(b.len());
    let mut n = 0;
    while n + BLOCK <= max
        && a[a.len() - n - BLOCK..a.len() - n] == b[b.len() - n - BLOCK..b.len() - n]
    {
        n += BLOCK;
    }
    while n < max && a[a.len() - n - 1] == b[b.len() - n - 1] {
        n += 1;
    }
    n
}

/// Whether two sequences of pieces spell the same bytes (compared slice by slice).
fn same_pieces<'a>(
    mut a: impl Iterator<Item = &'a [u8]>,
    mut b: impl Iterator<Item = &'a [u8]>,
) -> bool {
    let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
    loop {
        if x.is_empty() {
            x = a.next().unwrap_or(&[]);
        }
        if y.is_empty() {
            y = b.next().unwrap_or(&[]);
        }
        if x.is_empty() || y.is_empty() {
            return x.is_empty() && y.is_empty();
        }
        let k = x.len().min(y.len());
        if x[..k] != y[..k] {
            return false;
        }
        x = &x[k..];
        y = &y[k..];
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        self.len() == other.len()
            && same_pieces(
                self.pieces().map(str::as_bytes),
                other.pieces().map(str::as_bytes),
            )
    }
}

impl Eq for SharedText {}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len()
            && same_pieces(
                self.pieces().map(str::as_bytes),
                std::iter::once(other.as_bytes()),
            )
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

/// The texts of one sequence (a warp's states): each shares what it can with the one before.
/// Holds the previous text in full, so building costs time linear in each text but memory
/// only for what differs.
#[derive(Clone, Default)]
pub struct TextSequence {
    prev: Option<(String, SharedText)>,
}

impl TextSequence {
    /// The next text of the sequence.
    pub fn push(&mut self, s: String) -> SharedText {
        let t = match &self.prev {
            Some((text, shared)) => SharedText::after(shared, text, s.clone()),
            None => SharedText::new(s.clone()),
        };
        self.prev = Some((s, t.clone()));
        t
    }
}

impl fmt::Debug for TextSequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TextSequence")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(entries: &[u32]) -> String {
        let e: Vec<String> = entries
            .iter()
            .rev()
            .map(|x| format!("(call,1111,{x})"))
            .collect();
        format!("α=1111 δ=0000 stack={}", e.join("::"))
    }

    /// Push, pop and change the top of a deep stack: every text reads back as it was given,
    /// and each holds a few bytes of its own.
    #[test]
    fn texts_read_back_and_share_their_tails() {
        let mut seq = TextSequence::default();
        let mut all = Vec::new();
        let mut st: Vec<u32> = Vec::new();
        for i in 0..500 {
            st.push(i);
            let s = stack(&st);
            all.push((seq.push(s.clone()), s));
        }
        for i in 0..200 {
            st.pop();
            if i % 3 == 0 {
                *st.last_mut().unwrap() += 1000;
            }
            let s = stack(&st).replace("α=1111", if i % 2 == 0 { "α=1010" } else { "α=1111" });
            all.push((seq.push(s.clone()), s));
        }
        let mut own = 0;
        for (t, s) in &all {
            assert_eq!(t.to_string(), *s);
            assert!(*t == **s);
            assert_eq!(t.len(), s.len());
            own += t.own_bytes();
        }
        let full: usize = all.iter().map(|(_, s)| s.len()).sum();
        assert!(own * 50 < full, "{own} of {full} bytes held");
        assert_eq!(all[3].0, all[3].0.clone());
        assert!(all[3].0 != all[4].0);
        // Dropping a long chain does not recurse.
        drop(all);
    }

    #[test]
    fn multibyte_characters_are_not_split() {
        let mut seq = TextSequence::default();
        let a = seq.push("xα=ε".to_string());
        let b = seq.push("yβ=ε".to_string());
        assert_eq!(a.to_string(), "xα=ε");
        assert_eq!(b.to_string(), "yβ=ε");
        let c = seq.push(String::new());
        assert!(c.is_empty());
        assert_eq!(c.to_string(), "");
    }
}
