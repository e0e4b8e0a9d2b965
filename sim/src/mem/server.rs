//! A finite-bandwidth server (an L2 slice, a DRAM channel bus, an interconnect port) as a
//! calendar: per cycle it moves at most its rate, and a transfer takes capacity from the first
//! cycles at or after its arrival that have some left.
//!
//! Why a calendar: requests are timed when their instruction issues, so a request issued now
//! may book a transfer hundreds of cycles ahead (the reply after a DRAM access) before a
//! request issued a cycle later books one for the next cycle. A next-free-time server would
//! make the second wait behind the first; the calendar lets it use the idle cycles in between,
//! as the hardware would.
//!
//! Invariants: no cycle carries more than the rate; a transfer's capacity is taken from cycles
//! at or after its arrival, earliest first; the rate may be fractional (`bytes` per `cycles`),
//! kept exact by counting capacity in 1/`cycles` bytes. The calendar is a ring of
//! `WINDOW` cycles: a cycle that wraps onto a slot still booked for a later cycle counts as
//! full, so a backlog longer than the window only delays, it never oversubscribes.

/// Cycles the calendar remembers ahead of the earliest booking it is asked about.
const WINDOW: usize = 1 << 12;

/// A bandwidth server.
#[derive(Clone, Debug)]
pub struct Server {
    /// Capacity per cycle, in units of 1/`den` byte.
    cap: u64,
    den: u64,
    /// (cycle, units used) per ring slot.
    ring: Vec<(u64, u64)>,
    /// Every cycle in `full.0 .. full.1` is known to be full (a hint that saves walking a
    /// saturated stretch again).
    full: (u64, u64),
}

impl Server {
    /// An idle server of `bytes_per_cycle` (at least 1).
    pub fn new(bytes_per_cycle: u32) -> Server {
        Server::with_rate(bytes_per_cycle as u64, 1)
    }

    /// An idle server moving `bytes` every `cycles` cycles (both at least 1).
    pub fn with_rate(bytes: u64, cycles: u64) -> Server {
        Server {
            cap: bytes.max(1),
            den: cycles.max(1),
            // Allocated on first use: most of a big GPU's ports never see a packet.
            ring: Vec::new(),
            full: (0, 0),
        }
    }

    /// A transfer of `bytes` arriving at cycle `at`: the first cycle it moves in (at or after
    /// `at`); it occupies the capacity of that cycle and the following ones until done.
    pub fn serve(&mut self, at: u64, bytes: u64) -> u64 {
        self.book(at, bytes).0
    }

    /// As `serve`, returning the first and the last cycle the transfer moves in.
    pub fn book(&mut self, at: u64, bytes: u64) -> (u64, u64) {
        if bytes == 0 {
            return (at, at);
        }
        if self.ring.is_empty() {
            self.ring = vec![(u64::MAX, 0); WINDOW];
        }
        let mut need = bytes.saturating_mul(self.den);
        let mut c = at;
        if (self.full.0..self.full.1).contains(&c) {
            c = self.full.1;
        }
        let walk_from = c;
        let mut all_full = true;
        let mut first = None;
        loop {
            let slot = &mut self.ring[(c as usize) % WINDOW];
            if slot.0 != c {
                if slot.0 != u64::MAX && slot.0 > c {
                    // Still booked for a later lap: full for us.
                    c += 1;
                    continue;
                }
                *slot = (c, 0);
            }
            let free = self.cap - slot.1;
            if free > 0 {
                first.get_or_insert(c);
                let take = free.min(need);
                slot.1 += take;
                need -= take;
            }
            all_full &= slot.1 == self.cap;
            if need == 0 {
                break;
            }
            c += 1;
        }
        if all_full {
            // The walk filled walk_from..=c: extend or move the known-full stretch.
            if walk_from == self.full.1 {
                self.full.1 = c + 1;
            } else if walk_from > self.full.1 {
                self.full = (walk_from, c + 1);
            }
        }
        (first.unwrap_or(at), c)
    }

    /// Idle again at cycle 0 (a new launch restarts the cycle count).
    pub fn reset(&mut self) {
        self.ring.clear();
        self.full = (0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saturated server moves its rate per cycle.
    #[test]
    fn server_queues_at_its_bandwidth() {
        let mut s = Server::new(16);
        assert_eq!(s.serve(5, 128), 5);
        assert_eq!(s.serve(5, 128), 13);
        assert_eq!(s.serve(5, 8), 21);
        assert_eq!(s.serve(5, 8), 21);
        assert_eq!(s.serve(5, 8), 22);
        assert_eq!(s.serve(100, 8), 100);
        s.reset();
        assert_eq!(s.serve(0, 8), 0);
    }

    /// A booking far ahead does not hold back a later request for an earlier, idle cycle.
    #[test]
    fn future_bookings_leave_earlier_cycles_free() {
        let mut s = Server::new(32);
        assert_eq!(s.book(1000, 128), (1000, 1003));
        assert_eq!(s.serve(10, 128), 10);
        assert_eq!(s.serve(998, 128), 998, "uses 998, 999, then 1004 on");
        assert_eq!(s.serve(1000, 32), 1006);
    }

    /// Fractional rates are exact: 3 bytes every 2 cycles moves 300 bytes in 200 cycles.
    #[test]
    fn fractional_rate_is_exact() {
        let mut s = Server::with_rate(3, 2);
        let mut last = 0;
        for _ in 0..100 {
            last = s.book(0, 3).1;
        }
        assert_eq!(last, 199);
    }

    /// A backlog longer than the window still never oversubscribes a cycle.
    #[test]
    fn long_backlogs_stay_within_the_rate() {
        let mut s = Server::new(1);
        let n = WINDOW as u64 + 100;
        let (_, end) = s.book(0, n);
        assert_eq!(end, n - 1);
        assert_eq!(s.serve(0, 1), n);
    }
}
