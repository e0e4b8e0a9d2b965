//! The `mbarrier` object (PTX ISA 9.0 §9.7.13.15): a 64-bit word in shared memory holding the
//! current phase, the pending and expected arrival counts and the transaction count. PTX makes
//! its layout opaque; gpusim's layout, which programs cannot rely on, is
//!
//! | bits   | field                                                   |
//! |--------|---------------------------------------------------------|
//! | 0..20  | expected arrival count (set by init, lowered by arrive_drop) |
//! | 20..40 | pending arrival count of the current phase              |
//! | 40..61 | transaction count, two's complement in 21 bits          |
//! | 63     | phase parity (0 for the phase that `init` starts)       |
//!
//! A phase completes when its pending count and its transaction count are both zero
//! (§9.7.13.15.2 "Phase completion"); the next phase then starts with pending = expected and
//! tx-count = 0. The `state` an arrive returns is the arriving phase's parity in bit 63; waiting
//! on it completes once the barrier has left that phase. Everything here is a pure function of
//! the word so that the simulator (which applies transaction completions at their cycle) and
//! the models share the rules but not the timing.

/// Largest arrival count (`mbarrier.init` takes 1 ..= 2^20 − 1).
pub const MBAR_MAX_COUNT: u32 = (1 << 20) - 1;
/// Largest transaction count magnitude (`expect_tx`/`complete_tx` take 0 ..= 2^20 − 1).
pub const MBAR_MAX_TX: u32 = (1 << 20) - 1;

const COUNT_MASK: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 21;
const TX_MASK: u64 = (1 << TX_BITS) - 1;

/// The fields of an mbarrier word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarState {
    pub expected: u32,
    pub pending: u32,
    pub tx: i32,
    pub phase: bool,
}

impl MbarState {
    pub fn decode(word: u64) -> MbarState {
        let raw_tx = (word >> 40) & TX_MASK;
        let tx = ((raw_tx << (64 - TX_BITS)) as i64 >> (64 - TX_BITS)) as i32;
        MbarState {
            expected: (word & COUNT_MASK) as u32,
            pending: ((word >> 20) & COUNT_MASK) as u32,
            tx,
            phase: word >> 63 == 1,
        }
    }

    pub fn encode(self) -> u64 {
        (self.expected as u64 & COUNT_MASK)
            | (self.pending as u64 & COUNT_MASK) << 20
            | ((self.tx as i64 as u64) & TX_MASK) << 40
            | (self.phase as u64) << 63
    }

    /// Complete the phase if nothing is pending: flip the parity, re-arm the counts.
    fn settle(mut self) -> (MbarState, bool) {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
            (self, true)
        } else {
            (self, false)
        }
    }
}

/// What went wrong with an mbarrier operation (PTX leaves these undefined; gpusim reports them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MbarError {
    /// `init` count outside 1 ..= 2^20 − 1.
    BadCount(u64),
    /// More arrivals than the phase still expects.
    TooManyArrivals { pending: u32, count: u32 },
    /// A transaction count outside the 21-bit range.
    TxOverflow(i64),
}

impl std::fmt::Display for MbarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MbarError::BadCount(c) => {
                write!(f, "mbarrier count {c} is outside 1..={MBAR_MAX_COUNT}")
            }
            MbarError::TooManyArrivals { pending, count } => write!(
                f,
                "mbarrier arrive of {count} when only {pending} arrivals are pending in the current phase"
            ),
            MbarError::TxOverflow(t) => write!(
                f,
                "mbarrier transaction count {t} is outside ±{MBAR_MAX_TX}"
            ),
        }
    }
}

/// `mbarrier.init.b64 [a], count` (§9.7.13.15.9): phase 0, pending = expected = count.
pub fn mbar_init(count: u64) -> Result<u64, MbarError> {
    if count == 0 || count > MBAR_MAX_COUNT as u64 {
        return Err(MbarError::BadCount(count));
    }
    Ok(MbarState {
        expected: count as u32,
        pending: count as u32,
        tx: 0,
        phase: false,
    }
    .encode())
}

/// The result of an update: the new word and whether it completed the current phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarUpdate {
    pub word: u64,
    pub completed: bool,
    /// For an arrive: the opaque `state` it returns — the arrival phase's parity (bit 63) and
    /// the arrivals still pending in that phase after this one (bits 20..40).
    pub state: u64,
}

fn with_tx(s: MbarState, delta: i64) -> Result<MbarState, MbarError> {
    let tx = s.tx as i64 + delta;
    if tx.abs() > MBAR_MAX_TX as i64 {
        return Err(MbarError::TxOverflow(tx));
    }
    Ok(MbarState { tx: tx as i32, ..s })
}

/// `mbarrier.arrive{.expect_tx}{.noComplete}` and `arrive_drop` (§9.7.13.15.12–13):
/// first raise the tx-count by `expect_tx`, then count `count` arrivals; `drop` also lowers the
/// expected count of later phases. With `no_complete` the arrival must not be the last one
/// (PTX makes that undefined; gpusim reports it as too many arrivals).
pub fn mbar_arrive(
    word: u64,
    count: u32,
    expect_tx: u32,
    drop: bool,
    no_complete: bool,
) -> Result<MbarUpdate, MbarError> {
    let s = with_tx(MbarState::decode(word), expect_tx as i64)?;
    let limit = if no_complete {
        s.pending.saturating_sub(1)
    } else {
        s.pending
    };
    if count > limit {
        return Err(MbarError::TooManyArrivals {
            pending: s.pending,
            count,
        });
    }
    let mut s = MbarState {
        pending: s.pending - count,
        ..s
    };
    if drop {
        s.expected = s.expected.saturating_sub(count);
    }
    let state = MbarState {
        expected: 0,
        pending: s.pending,
        tx: 0,
        phase: s.phase,
    }
    .encode();
    let (s, completed) = s.settle();
    Ok(MbarUpdate {
        word: s.encode(),
        completed,
        state,
    })
}

/// `mbarrier.expect_tx` (+bytes) and `mbarrier.complete_tx` or a transfer's completion
/// (−bytes) (§9.7.13.15.10–11). Raising the count never completes a phase; lowering it to zero
/// completes the phase once every arrival is in.
pub fn mbar_tx(word: u64, delta: i64) -> Result<MbarUpdate, MbarError> {
    let s = with_tx(MbarState::decode(word), delta)?;
    let (s, completed) = if delta < 0 { s.settle() } else { (s, false) };
    Ok(MbarUpdate {
        word: s.encode(),
        completed,
        state: 0,
    })
}

/// The `state` operand an arrive returns: the parity of the phase it arrived in.
pub fn mbar_state_of(word: u64) -> u64 {
    word & (1 << 63)
}

/// `test_wait`/`try_wait` with a `state` (§9.7.13.15.16): has the barrier left that phase?
pub fn mbar_state_done(word: u64, state: u64) -> bool {
    mbar_state_of(word) != mbar_state_of(state)
}

/// `test_wait.parity`/`try_wait.parity`: has the phase of parity `parity` (0 even, 1 odd)
/// completed, i.e. is the current phase of the other parity?
pub fn mbar_parity_done(word: u64, parity: u64) -> bool {
    (word >> 63) != (parity & 1)
}

/// `mbarrier.pending_count.b64 count, state` (§9.7.13.15.17): the arrivals that were still
/// pending when the arrive that returned `state` had counted itself.
pub fn mbar_pending_count(state: u64) -> u32 {
    MbarState::decode(state).pending
}

/// The pending-count increment `cp.async.mbarrier.arrive` (without `.noinc`) makes at issue, so
/// that its asynchronous arrive leaves the phase's count as it was (§9.7.9.25.3.4).
pub fn mbar_add_pending(word: u64) -> Result<u64, MbarError> {
    let s = MbarState::decode(word);
    if s.pending >= MBAR_MAX_COUNT {
        return Err(MbarError::BadCount(s.pending as u64 + 1));
    }
    Ok(MbarState {
        pending: s.pending + 1,
        ..s
    }
    .encode())
}
