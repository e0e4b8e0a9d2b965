//! A link between components: a bounded FIFO of messages, each delivered `latency` cycles
//! after it leaves its producer's port, which moves a fixed number of bytes per cycle.
//!
//! The port is a byte clock, not a calendar: messages leave in order, so the next free byte
//! time is all there is to remember (memory does not grow with the cycle horizon). A message
//! of `b` bytes leaves in the first cycle the port has capacity left, and occupies the port
//! for `b` bytes' worth; its delivery is `latency` after it left, so an idle link delivers
//! exactly `latency` cycles after the send, whatever the message's size (the configured
//! latencies are load-to-use figures that include one transfer).

use std::collections::VecDeque;

/// A port moving `bytes` every `cycles` cycles, as a byte clock in units of 1/`cycles` byte.
#[derive(Clone, Copy, Debug)]
pub(super) struct Port {
    /// Units a cycle provides (`bytes`) and a byte costs (`cycles`).
    per_cycle: u64,
    per_byte: u64,
    /// The first unit not yet used.
    next: u64,
}

impl Port {
    pub fn new(bytes: u64, cycles: u64) -> Port {
        Port {
            per_cycle: bytes.max(1),
            per_byte: cycles.max(1),
            next: 0,
        }
    }

    /// Move `bytes` from cycle `now` on: the cycle the transfer starts in.
    pub fn transfer(&mut self, now: u64, bytes: u64) -> u64 {
        let begin = self.next.max(now.saturating_mul(self.per_cycle));
        self.next = begin + bytes * self.per_byte;
        begin / self.per_cycle
    }

    /// Whether some capacity of cycle `now` is left.
    pub fn free_in(&self, now: u64) -> bool {
        self.next < (now + 1).saturating_mul(self.per_cycle)
    }

    /// The first cycle with capacity left.
    pub fn free_from(&self) -> u64 {
        self.next / self.per_cycle
    }

    /// From now on move `bytes` every `cycles` cycles (its clock domain's clock changed
    /// against the core's): the next free byte time keeps its place in cycles.
    pub fn retime(&mut self, bytes: u64, cycles: u64) {
        let (per_cycle, per_byte) = (bytes.max(1), cycles.max(1));
        let next = (self.next as u128 * per_cycle as u128).div_ceil(self.per_cycle as u128);
        self.next = u64::try_from(next).unwrap_or(u64::MAX);
        self.per_cycle = per_cycle;
        self.per_byte = per_byte;
    }
}

/// A bounded latency FIFO behind a port.
pub(super) struct Link<T> {
    /// (delivery cycle, message), in order of delivery.
    q: VecDeque<(u64, T)>,
    cap: usize,
    latency: u64,
    port: Port,
}

impl<T> Link<T> {
    /// A link holding `cap` messages, `latency` cycles long, its port moving `bytes` every
    /// `cycles` cycles.
    pub fn new(cap: usize, latency: u64, bytes: u64, cycles: u64) -> Link<T> {
        Link {
            q: VecDeque::with_capacity(cap.min(1024)),
            cap: cap.max(1),
            latency,
            port: Port::new(bytes, cycles),
        }
    }

    /// The port's rate changed (`Port::retime`).
    pub fn retime_port(&mut self, bytes: u64, cycles: u64) {
        self.port.retime(bytes, cycles);
    }

    /// Room for one more message (a producer that finds none is held).
    pub fn has_room(&self) -> bool {
        self.q.len() < self.cap
    }

    /// Send `msg` of `bytes` at cycle `now`; returns its delivery cycle. The caller checked
    /// `has_room`, except for the silent write-backs, which a step causes and cannot hold
    /// back: they may overfill the link by the victims of one step, and hold its producers
    /// until it drains.
    pub fn send(&mut self, now: u64, msg: T, bytes: u64) -> u64 {
        let at = self.port.transfer(now, bytes) + self.latency;
        self.q.push_back((at, msg));
        at
    }

    /// The delivery cycle of the first message.
    pub fn due(&self) -> Option<u64> {
        self.q.front().map(|&(at, _)| at)
    }

    /// The first message, if it is delivered by `now`.
    pub fn front(&self, now: u64) -> Option<&T> {
        match self.q.front() {
            Some((at, m)) if *at <= now => Some(m),
            _ => None,
        }
    }

    pub fn pop(&mut self) -> Option<T> {
        self.q.pop_front().map(|(_, m)| m)
    }

    /// The `i`-th message, if it is delivered by `now`.
    pub fn get(&self, i: usize, now: u64) -> Option<&T> {
        match self.q.get(i) {
            Some((at, m)) if *at <= now => Some(m),
            _ => None,
        }
    }

    /// Take the `i`-th message out of order (the crossbar delivers around a packet whose
    /// destination is full).
    pub fn take(&mut self, i: usize) -> Option<T> {
        self.q.remove(i).map(|(_, m)| m)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_link_delivers_after_its_latency_whatever_the_size() {
        let mut l: Link<u32> = Link::new(4, 7, 32, 1);
        assert_eq!(l.send(10, 1, 136), 17);
        assert_eq!(l.front(16), None);
        assert_eq!(l.front(17), Some(&1));
    }

    #[test]
    fn port_bandwidth_spaces_messages() {
        // 34 bytes per cycle: 136-byte messages leave every 4 cycles.
        let mut l: Link<u32> = Link::new(8, 5, 34, 1);
        let at: Vec<u64> = (0..4).map(|i| l.send(0, i, 136)).collect();
        assert_eq!(at, [5, 9, 13, 17]);
        assert!(l.has_room());
    }

    #[test]
    fn fractional_rate_is_exact() {
        // 2048 bytes per cycle over 64 slices = 32 per cycle: 1000 × 128 bytes take 4000
        // cycles.
        let mut p = Port::new(2048, 64);
        let mut last = 0;
        for _ in 0..1000 {
            last = p.transfer(0, 128);
        }
        assert_eq!(last, 3996);
        assert_eq!(p.free_from(), 4000);
        assert!(!p.free_in(3999));
        assert!(p.free_in(4000));
    }

    /// A port whose domain's clock doubles against the core's moves twice the bytes per core
    /// cycle from then on; its backlog keeps its place in cycles.
    #[test]
    fn a_retimed_port_keeps_its_backlog_in_cycles() {
        let mut p = Port::new(32, 1);
        p.transfer(0, 320); // busy through cycle 9
        assert_eq!(p.free_from(), 10);
        p.retime(2 * 32 * 1980, 1980);
        assert_eq!(p.free_from(), 10);
        assert_eq!(p.transfer(10, 640), 10);
        assert_eq!(p.free_from(), 20);
    }

    #[test]
    fn a_full_link_has_no_room() {
        let mut l: Link<u32> = Link::new(2, 1, 8, 1);
        l.send(0, 1, 8);
        l.send(0, 2, 8);
        assert!(!l.has_room());
        assert_eq!(l.len(), 2);
        assert_eq!(l.pop(), Some(1));
        assert!(l.has_room());
    }
}
