//! The memory environment η and the micro-step interpreter of memory programs (Habermaier
//! §4.4–4.6; digest §2.3–2.6): program state Σ, operations with their Wait/⊥ results, an
//! explicit work list run until `yield` or `end`, and the silent evict / write-back rules that
//! a caller applies BETWEEN micro steps through a deterministic `Oracle`.

use std::collections::BTreeMap;

use super::cache::{Cache, CacheError, EvClass, MemOpId, Outcome};
use super::syntax::{BExp, Level, OpExp, Stm};

/// Result of a micro step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ya {
    Yield,
    End,
}

/// ⊥: the program is stuck.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("`{0}` is not defined for this access")]
    Undefined(String),
    #[error("write to constant memory")]
    ConstWrite,
    #[error("the program text ran out without `end`")]
    NoEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSpace {
    Global,
    Local,
    Const,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicSpace {
    Global,
    Shared,
}

/// The atomic function `aop` on little-endian unsigned integers of the access size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomFn {
    Add,
    Exch,
    And,
    Or,
    Min,
    Max,
    Cas,
}

impl AtomFn {
    fn apply(self, old: u64, b: u64, c: u64) -> u64 {
        match self {
            AtomFn::Add => old.wrapping_add(b),
            AtomFn::Exch => b,
            AtomFn::And => old & b,
            AtomFn::Or => old | b,
            AtomFn::Min => old.min(b),
            AtomFn::Max => old.max(b),
            AtomFn::Cas => {
                if old == b {
                    c
                } else {
                    old
                }
            }
        }
    }
}

/// One piece of the decomposition function `df`: `len` bytes of the value at `offset` go to `reg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegSlice {
    pub reg: u32,
    pub offset: usize,
    pub len: usize,
}

/// The access part of Σ (digest §2.4.2, four variants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Device {
        addr: u64,
        size: usize,
        space: DeviceSpace,
        cached: bool,
        v_io: Vec<u8>,
    },
    Shared {
        addrs: Vec<(u64, usize)>,
        v_io: Vec<Vec<u8>>,
    },
    Atomic {
        addr: u64,
        size: usize,
        space: AtomicSpace,
        aop: AtomFn,
        v_out: Vec<u8>,
        v_in1: Vec<u8>,
        v_in2: Vec<u8>,
    },
    Reg {
        value: Vec<u8>,
    },
}

/// Σ: the access, the SM `pid`, the registers to block/release, `df` and the op id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sigma {
    pub mid: MemOpId,
    pub pid: usize,
    pub regs: Vec<u32>,
    pub df: Option<Vec<RegSlice>>,
    pub access: Access,
    /// The whole line moved by cache fills (readMem / readX fill it, updateX consumes it).
    pub line: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvConfig {
    pub line_size: usize,
    pub l1_sets: usize,
    pub l1_ways: usize,
    pub l2_sets: usize,
    pub l2_ways: usize,
    pub num_sms: usize,
    pub shared_banks: usize,
}

#[derive(Clone, Debug, Default)]
pub struct SharedMem {
    pub bytes: BTreeMap<u64, u8>,
    pub locks: Vec<bool>,
}

/// A register's value and whether it is blocked by a pending program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reg {
    pub value: Vec<u8>,
    pub blocked: bool,
}

/// η: DRAM (global, local and const bytes; unwritten bytes read 0), L2, and per SM an L1,
/// shared memory with bank locks and a register file.
#[derive(Clone, Debug)]
pub struct MemEnv {
    pub dram: BTreeMap<u64, u8>,
    pub l2: Cache,
    pub l1: Vec<Cache>,
    pub shared: Vec<SharedMem>,
    pub regs: Vec<BTreeMap<u32, Reg>>,
}

/// One pending memory operation: its remaining program (a work list) and Σ.
#[derive(Clone, Debug)]
pub struct MemOp {
    pub sigma: Sigma,
    pub prio: u32,
    work: Vec<Stm>,
}

impl MemOp {
    pub fn mid(&self) -> MemOpId {
        self.sigma.mid
    }
}

/// A silent rule of digest §2.6 with its target line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silent {
    EvictL1 { pid: usize, line: u64 },
    EvictL2 { line: u64 },
    WbL1 { pid: usize, line: u64 },
    WbL2 { line: u64 },
}

/// All choices of the macro-step system in one place.
pub trait Oracle {
    /// Index into `ready` (the ops of highest priority) of the op to step.
    fn pick_op(&mut self, ready: &[MemOpId]) -> usize;
    /// Index into `enabled` of a silent rule to fire before the next micro step, or `None`.
    fn pick_silent(&mut self, enabled: &[Silent]) -> Option<usize>;
}

/// The default policy: steps the first ready op; fires write-backs eagerly (L1 before L2),
/// never evicts silently (reservations evict on demand).
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstReady;

impl Oracle for FirstReady {
    fn pick_op(&mut self, _ready: &[MemOpId]) -> usize {
        0
    }
    fn pick_silent(&mut self, enabled: &[Silent]) -> Option<usize> {
        enabled
            .iter()
            .position(|s| matches!(s, Silent::WbL1 { .. }))
            .or_else(|| {
                enabled
                    .iter()
                    .position(|s| matches!(s, Silent::WbL2 { .. }))
            })
    }
}

fn undefined(op: OpExp) -> MemError {
    MemError::Undefined(op.keyword())
}

impl MemEnv {
    pub fn new(c: EnvConfig) -> MemEnv {
        MemEnv {
            dram: BTreeMap::new(),
            l2: Cache::new(c.line_size, c.l2_sets, c.l2_ways),
            l1: (0..c.num_sms)
                .map(|_| Cache::new(c.line_size, c.l1_sets, c.l1_ways))
                .collect(),
            shared: (0..c.num_sms)
                .map(|_| SharedMem {
                    bytes: BTreeMap::new(),
                    locks: vec![false; c.shared_banks],
                })
                .collect(),
            regs: vec![BTreeMap::new(); c.num_sms],
        }
    }

    pub fn read_dram(&self, a: u64, size: usize) -> Vec<u8> {
        (a..a + size as u64)
            .map(|x| self.dram.get(&x).copied().unwrap_or(0))
            .collect()
    }

    pub fn write_dram(&mut self, a: u64, bytes: &[u8]) {
        for (k, b) in bytes.iter().enumerate() {
            self.dram.insert(a + k as u64, *b);
        }
    }

    fn read_shared(&self, pid: usize, a: u64, size: usize) -> Vec<u8> {
        let m = &self.shared[pid].bytes;
        (a..a + size as u64)
            .map(|x| m.get(&x).copied().unwrap_or(0))
            .collect()
    }

    fn write_shared(&mut self, pid: usize, a: u64, bytes: &[u8]) {
        for (k, b) in bytes.iter().enumerate() {
            self.shared[pid].bytes.insert(a + k as u64, *b);
        }
    }

    /// `banks(a, size)`: the 4-byte words touched, modulo the bank count.
    fn banks(&self, pid: usize, a: u64, size: usize) -> Vec<usize> {
        let n = self.shared[pid].locks.len().max(1) as u64;
        let mut b: Vec<usize> = (a / 4..=(a + size as u64 - 1) / 4)
            .map(|w| (w % n) as usize)
            .collect();
        b.dedup();
        b
    }

    /// Issue (memOp, digest §2.7): block every register of Σ and start the program.
    pub fn issue(&mut self, prog: &[Stm], sigma: Sigma, prio: u32) -> MemOp {
        for r in &sigma.regs {
            self.regs[sigma.pid].entry(*r).or_default().blocked = true;
        }
        MemOp {
            sigma,
            prio,
            work: prog.iter().rev().cloned().collect(),
        }
    }

    fn cache(&mut self, pid: usize, l: Level) -> &mut Cache {
        match l {
            Level::L1 => &mut self.l1[pid],
            Level::L2 => &mut self.l2,
        }
    }

    fn eval_b(&self, b: &BExp, s: &Sigma) -> Result<bool, MemError> {
        Ok(match b {
            BExp::True => true,
            BExp::False => false,
            BExp::Not(x) => !self.eval_b(x, s)?,
            BExp::And(x, y) => self.eval_b(x, s)? && self.eval_b(y, s)?,
            BExp::Or(x, y) => self.eval_b(x, s)? || self.eval_b(y, s)?,
            BExp::IsCached(l) => {
                let (addr, _) = cached_target(s)
                    .ok_or_else(|| MemError::Undefined(format!("isCached{l:?}")))?;
                match l {
                    Level::L1 => self.l1[s.pid].is_cached(addr),
                    Level::L2 => self.l2.is_cached(addr),
                }
            }
        })
    }

    /// `O[op](η, σ)`: `Ok(true)` = continue, `Ok(false)` = yield (Wait).
    fn eval_op(&mut self, op: OpExp, s: &mut Sigma) -> Result<bool, MemError> {
        let pid = s.pid;
        match op {
            OpExp::ReadMem => match &mut s.access {
                Access::Device {
                    addr,
                    size,
                    cached,
                    v_io,
                    ..
                } => {
                    if *cached {
                        // Cached ops fetch the whole aligned line so that the fill makes it valid.
                        let la = self.l2.line_addr(*addr);
                        s.line = self.read_dram(la, self.l2.line_size);
                        let off = (*addr - la) as usize;
                        *v_io = s.line[off..off + *size].to_vec();
                    } else {
                        *v_io = self.read_dram(*addr, *size);
                    }
                }
                Access::Atomic {
                    addr,
                    size,
                    space,
                    v_out,
                    ..
                } => match space {
                    AtomicSpace::Global => {
                        let la = self.l2.line_addr(*addr);
                        s.line = self.read_dram(la, self.l2.line_size);
                        *v_out = self.read_dram(*addr, *size);
                    }
                    AtomicSpace::Shared => *v_out = self.read_shared(pid, *addr, *size),
                },
                Access::Shared { addrs, v_io } => {
                    *v_io = addrs
                        .iter()
                        .map(|&(a, n)| self.read_shared(pid, a, n))
                        .collect();
                }
                Access::Reg { .. } => return Err(undefined(op)),
            },
            OpExp::WriteMem => match &s.access {
                Access::Device { space, .. } if *space == DeviceSpace::Const => {
                    return Err(MemError::ConstWrite)
                }
                Access::Device { addr, v_io, .. } => self.write_dram(*addr, &v_io.clone()),
                Access::Atomic {
                    addr, space, v_in1, ..
                } => match space {
                    AtomicSpace::Global => self.write_dram(*addr, &v_in1.clone()),
                    AtomicSpace::Shared => self.write_shared(pid, *addr, &v_in1.clone()),
                },
                Access::Shared { addrs, v_io } => {
                    for ((a, _), v) in addrs.clone().iter().zip(v_io.clone()) {
                        self.write_shared(pid, *a, &v);
                    }
                }
                Access::Reg { .. } => return Err(undefined(op)),
            },
            OpExp::AtomOp => match &mut s.access {
                Access::Atomic {
                    aop,
                    v_out,
                    v_in1,
                    v_in2,
                    ..
                } => {
                    let le = |v: &[u8]| {
                        let mut b = [0u8; 8];
                        b[..v.len()].copy_from_slice(v);
                        u64::from_le_bytes(b)
                    };
                    let new = aop.apply(le(v_out), le(v_in1), le(v_in2));
                    *v_in1 = new.to_le_bytes()[..v_out.len()].to_vec();
                }
                _ => return Err(undefined(op)),
            },
            OpExp::ReleaseRegs => {
                for r in &s.regs {
                    self.regs[pid].entry(*r).or_default().blocked = false;
                }
            }
            OpExp::WriteToRegs => {
                let df = s.df.clone().ok_or_else(|| undefined(op))?;
                let value: Vec<u8> = match &s.access {
                    Access::Device { v_io, .. } => v_io.clone(),
                    Access::Atomic { v_out, .. } => v_out.clone(),
                    Access::Shared { v_io, .. } => v_io.concat(),
                    Access::Reg { value } => value.clone(),
                };
                // The df writes values but does not unblock (digest §2.4.2).
                for d in df {
                    let reg = self.regs[pid].entry(d.reg).or_default();
                    reg.value = value[d.offset..d.offset + d.len].to_vec();
                }
            }
            OpExp::Lock | OpExp::Unlock => {
                let Access::Atomic {
                    addr,
                    size,
                    space: AtomicSpace::Shared,
                    ..
                } = s.access
                else {
                    return Err(undefined(op));
                };
                let banks = self.banks(pid, addr, size);
                let locks = &mut self.shared[pid].locks;
                if op == OpExp::Lock {
                    // All-or-nothing, so no deadlock (Habermaier §4.4 lock).
                    if banks.iter().any(|&b| locks[b]) {
                        return Ok(false);
                    }
                    banks.iter().for_each(|&b| locks[b] = true);
                } else {
                    banks.iter().for_each(|&b| locks[b] = false);
                }
            }
            OpExp::Read(l)
            | OpExp::Write(l)
            | OpExp::Reserve(l)
            | OpExp::Update(l)
            | OpExp::Evict(l)
            | OpExp::Discard(l)
            | OpExp::ClassifyFirst(l)
            | OpExp::ClassifyNormal(l) => {
                // Digest §2.8 gap 3: cache ops are allowed on .global atomics too.
                let (addr, size) = cached_target(s).ok_or_else(|| undefined(op))?;
                let mid = s.mid;
                let c = self.cache(pid, l);
                let done = |o: Outcome<()>| o == Outcome::Done(());
                match op {
                    OpExp::Read(_) => match c.read(addr, mid)? {
                        Some(line) => {
                            let off = (addr - c.line_addr(addr)) as usize;
                            let v = line[off..off + size].to_vec();
                            s.line = line;
                            match &mut s.access {
                                Access::Atomic { v_out, .. } => *v_out = v,
                                Access::Device { v_io, .. } => *v_io = v,
                                _ => return Err(undefined(op)),
                            }
                        }
                        None => return Ok(false),
                    },
                    OpExp::Write(_) => {
                        let v = match &s.access {
                            Access::Atomic { v_in1, .. } => v_in1,
                            Access::Device { v_io, .. } => v_io,
                            _ => return Err(undefined(op)),
                        };
                        return Ok(done(c.write(addr, v)?));
                    }
                    OpExp::Reserve(_) => return Ok(done(c.reserve(addr, Some(mid))?)),
                    OpExp::Update(_) => c.update(addr, &s.line)?,
                    OpExp::Evict(_) => return Ok(done(c.evict(addr)?)),
                    OpExp::Discard(_) => return Ok(done(c.discard(addr)?)),
                    OpExp::ClassifyFirst(_) => c.classify(addr, EvClass::First)?,
                    _ => c.classify(addr, EvClass::Normal)?,
                }
            }
        }
        Ok(true)
    }

    /// One micro step (digest §2.4.5): run the work list until `yield` or `end`. An op that
    /// waits stays at the head of the work list; its state changes (pins) are kept.
    pub fn micro_step(&mut self, op: &mut MemOp) -> Result<Ya, MemError> {
        loop {
            let Some(s) = op.work.pop() else {
                return Err(MemError::NoEnd);
            };
            match s {
                Stm::Skip => {}
                Stm::Yield => return Ok(Ya::Yield),
                Stm::End => return Ok(Ya::End),
                Stm::If(b, t, e) => {
                    let branch = if self.eval_b(&b, &op.sigma)? { t } else { e };
                    op.work.extend(branch.into_iter().rev());
                }
                Stm::Op(o) => {
                    if !self.eval_op(o, &mut op.sigma)? {
                        // (op2): the remainder is the same op, retried next micro step.
                        op.work.push(Stm::Op(o));
                        return Ok(Ya::Yield);
                    }
                }
            }
        }
    }

    /// Silent rules whose side conditions hold now, in a fixed order (L1s by pid, then L2;
    /// lines in cache order; write-backs before evictions).
    pub fn enabled_silent(&self) -> Vec<Silent> {
        let mut wb = Vec::new();
        let mut ev = Vec::new();
        for (pid, c) in self.l1.iter().enumerate() {
            for (i, l) in c.lines().iter().enumerate() {
                let Some(line) = l.addr else { continue };
                if l.dirty() {
                    wb.push(Silent::WbL1 { pid, line });
                }
                if c.can_evict(i) {
                    ev.push(Silent::EvictL1 { pid, line });
                }
            }
        }
        for (i, l) in self.l2.lines().iter().enumerate() {
            let Some(line) = l.addr else { continue };
            if l.dirty() {
                wb.push(Silent::WbL2 { line });
            }
            if self.l2.can_evict(i) {
                ev.push(Silent::EvictL2 { line });
            }
        }
        wb.extend(ev);
        wb
    }

    /// Fires a silent rule if its side condition holds; returns whether it fired. `wb_L1`
    /// needs L2 to accept the write now; only the dirty bytes travel (gap 1 decision).
    pub fn apply_silent(&mut self, s: Silent) -> Result<bool, MemError> {
        match s {
            Silent::EvictL1 { pid, line } => Ok(self.l1[pid].evict_silent(line)),
            Silent::EvictL2 { line } => Ok(self.l2.evict_silent(line)),
            Silent::WbL1 { pid, line } => {
                let Some(l) = self.l1[pid].line(line).filter(|l| l.dirty()).cloned() else {
                    return Ok(false);
                };
                if self.l2.write_masked(line, &l.data, &l.dirty_bytes)? == Outcome::Wait {
                    return Ok(false);
                }
                self.l1[pid].mark_clean(line);
                Ok(true)
            }
            Silent::WbL2 { line } => {
                let Some(l) = self.l2.line(line).filter(|l| l.dirty()).cloned() else {
                    return Ok(false);
                };
                for k in (0..l.data.len()).filter(|&k| l.dirty_bytes[k]) {
                    self.dram.insert(line + k as u64, l.data[k]);
                }
                self.l2.mark_clean(line);
                Ok(true)
            }
        }
    }

    /// Macro steps (digest §2.6): before each micro step the oracle may fire silent rules;
    /// then it picks one highest-priority op. Runs until no op is left or `max_steps` micro
    /// steps; returns the micro steps taken.
    pub fn run(
        &mut self,
        ops: &mut Vec<MemOp>,
        oracle: &mut dyn Oracle,
        max_steps: usize,
    ) -> Result<usize, MemError> {
        let mut steps = 0;
        while !ops.is_empty() && steps < max_steps {
            self.settle(oracle)?;
            let top = ops.iter().map(|o| o.prio).max().unwrap_or(0);
            let ready: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].prio == top).collect();
            let mids: Vec<MemOpId> = ready.iter().map(|&i| ops[i].mid()).collect();
            let i = ready[oracle.pick_op(&mids).min(ready.len() - 1)];
            steps += 1;
            if self.micro_step(&mut ops[i])? == Ya::End {
                ops.remove(i);
            }
        }
        self.settle(oracle)?;
        Ok(steps)
    }

    /// Fires silent rules as long as the oracle picks one that fires.
    pub fn settle(&mut self, oracle: &mut dyn Oracle) -> Result<(), MemError> {
        loop {
            let en = self.enabled_silent();
            match oracle.pick_silent(&en) {
                Some(k) if k < en.len() && self.apply_silent(en[k])? => {}
                _ => return Ok(()),
            }
        }
    }
}

/// Address and size for cache ops and `isCached`: cached device accesses and .global atomics.
fn cached_target(s: &Sigma) -> Option<(u64, usize)> {
    match s.access {
        Access::Device {
            addr,
            size,
            cached: true,
            ..
        } => Some((addr, size)),
        Access::Atomic {
            addr,
            size,
            space: AtomicSpace::Global,
            ..
        } => Some((addr, size)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_functions() {
        let r: Vec<u64> = [
            AtomFn::Add,
            AtomFn::Exch,
            AtomFn::And,
            AtomFn::Or,
            AtomFn::Min,
            AtomFn::Max,
        ]
        .iter()
        .map(|f| f.apply(6, 3, 0))
        .collect();
        assert_eq!(r, vec![9, 3, 2, 7, 3, 6]);
        assert_eq!(
            (AtomFn::Cas.apply(6, 6, 1), AtomFn::Cas.apply(6, 5, 1)),
            (1, 6)
        );
    }

    #[test]
    fn silent_evictions_need_clean_unpinned_lines() {
        let mut e = MemEnv::new(EnvConfig {
            line_size: 8,
            l1_sets: 1,
            l1_ways: 1,
            l2_sets: 1,
            l2_ways: 1,
            num_sms: 1,
            shared_banks: 4,
        });
        e.l1[0].write(0, &[1]).unwrap();
        assert_eq!(e.enabled_silent(), vec![Silent::WbL1 { pid: 0, line: 0 }]);
        assert!(!e.apply_silent(Silent::EvictL1 { pid: 0, line: 0 }).unwrap());
        assert!(e.apply_silent(Silent::WbL1 { pid: 0, line: 0 }).unwrap());
        assert!(e.apply_silent(Silent::EvictL1 { pid: 0, line: 0 }).unwrap());
        assert!(e.apply_silent(Silent::WbL2 { line: 0 }).unwrap());
        assert!(e.apply_silent(Silent::EvictL2 { line: 0 }).unwrap());
        assert_eq!(e.read_dram(0, 2), vec![1, 0]);
        assert!(e.enabled_silent().is_empty());
    }
}
