//! Warp collectives over the lanes that execute them: shfl, vote, match, activemask, redux.
//!
//! Under independent thread scheduling (a policy with `independent_threads()` and a module for
//! sm_70 or higher, `Program::member_mask_waits`) a `.sync` collective whose group does not
//! hold every live thread of its membermask does not execute: the group waits at it
//! (`Flow::CollectiveWait`, PTX ISA shfl.sync: "wait until all non-exited threads
//! corresponding to membermask have executed"). When the members have all arrived, the policy
//! issues it once for them; they may wait at matching instructions at different pcs (the two
//! sides of an if/else), so each lane's operands and destinations come from its own instruction
//! (`Sites`).

use super::*;
use std::hash::{Hash, Hasher};

/// The instruction each lane executes: `one` for every lane, except for the lanes of a
/// released collective that waited at a matching instruction elsewhere (`lanes[l]`).
struct Sites<'i> {
    one: &'i Inst,
    lanes: Vec<&'i Inst>,
}

impl<'i> Sites<'i> {
    fn at(&self, l: usize) -> &'i Inst {
        self.lanes.get(l).copied().unwrap_or(self.one)
    }
}

/// What makes two `.sync` collectives match (the operation, without its operands), and the
/// membermask operand; `None` for instructions that are not `.sync` collectives.
fn collective_key(op: &Op) -> Option<(u64, &Operand)> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mask = match op {
        Op::Shfl { mode, mask, .. } => {
            (0u8, mode).hash(&mut h);
            mask
        }
        Op::Vote { mode, mask, .. } => {
            (1u8, mode).hash(&mut h);
            mask
        }
        Op::Match { mode, ty, mask, .. } => {
            (2u8, mode, ty).hash(&mut h);
            mask
        }
        Op::Redux { op, ty, mask, .. } => {
            (3u8, op, ty).hash(&mut h);
            mask
        }
        _ => return None,
    };
    Some((h.finish(), mask))
}

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_collective(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        out: &mut Executed,
    ) -> Result<(), Fault> {
        let active = w.simt.active_mask();
        if let Some(flow) = self.member_wait(w, inst) {
            out.flow = flow;
            return Ok(());
        }
        let mut sites = Sites {
            one: inst,
            lanes: Vec::new(),
        };
        let mut exec = exec;
        if w.simt.split_issue() {
            let prog = self.prog;
            let body = &prog.module.function(w.func()).body;
            sites.lanes = (0..w.warp_size as usize)
                .map(|l| match active >> l & 1 {
                    1 => &body[w.simt.lane_pc(l) as usize],
                    _ => inst,
                })
                .collect();
            // Each lane's own guard.
            exec = lanes(active)
                .filter(|&l| match sites.at(l).guard {
                    None => true,
                    Some(g) => ((w.read(g.reg.0, l) & 1) == 1) != g.negated,
                })
                .fold(0, |m, l| m | 1 << l);
            out.lanes = exec;
        }
        match &inst.op {
            Op::Shfl { mode, .. } => self.exec_shfl(w, exec, *mode, &sites),
            Op::Vote { mode, .. } => {
                let mut trues = 0u64;
                for l in lanes(exec) {
                    let Op::Vote { a, .. } = &sites.at(l).op else {
                        unreachable!("matching collectives are votes")
                    };
                    if self.val(w, a, l) & 1 == 1 {
                        trues |= 1 << l;
                    }
                }
                // Only active lanes with a true guard vote; others count as false (§5.4.2).
                let v = match mode {
                    VoteMode::All => (trues == exec) as u64,
                    VoteMode::Any => (trues != 0) as u64,
                    VoteMode::Uni => (trues == 0 || trues == exec) as u64,
                    VoteMode::Ballot => trues & 0xFFFF_FFFF,
                };
                for l in lanes(exec) {
                    let Op::Vote { d, .. } = &sites.at(l).op else {
                        unreachable!("matching collectives are votes")
                    };
                    w.write(d.0, l, v);
                }
            }
            Op::Match { mode, ty, .. } => {
                let vals: Vec<(usize, u64)> = lanes(exec)
                    .map(|l| {
                        let Op::Match { a, .. } = &sites.at(l).op else {
                            unreachable!("matching collectives are matches")
                        };
                        (l, self.val(w, a, l) & ty.mask())
                    })
                    .collect();
                let all_eq = vals.windows(2).all(|x| x[0].1 == x[1].1);
                for &(l, v) in &vals {
                    let r = match mode {
                        MatchMode::Any => vals
                            .iter()
                            .filter(|x| x.1 == v)
                            .fold(0u64, |m, x| m | 1 << x.0),
                        MatchMode::All => {
                            if all_eq {
                                exec
                            } else {
                                0
                            }
                        }
                    };
                    let Op::Match { d, p, .. } = &sites.at(l).op else {
                        unreachable!("matching collectives are matches")
                    };
                    w.write(d.0, l, r);
                    if let Some(p) = p {
                        w.write(p.0, l, all_eq as u64);
                    }
                }
            }
            Op::ActiveMask { d } => {
                for l in lanes(exec) {
                    w.write(d.0, l, active);
                }
            }
            Op::Redux { op, ty, mask, .. } => {
                // The reduction runs over the executing lanes named in membermask (read from
                // the first executing lane); every executing lane receives it. PTX leaves an
                // executing lane outside membermask undefined.
                if let Some(l0) = lanes(exec).next() {
                    let members = exec & self.val(w, mask, l0);
                    let v = sem::redux(
                        *op,
                        *ty,
                        lanes(members).map(|l| {
                            let Op::Redux { a, .. } = &sites.at(l).op else {
                                unreachable!("matching collectives are reductions")
                            };
                            self.val(w, a, l)
                        }),
                    );
                    for l in lanes(exec) {
                        let Op::Redux { d, .. } = &sites.at(l).op else {
                            unreachable!("matching collectives are reductions")
                        };
                        w.write(d.0, l, v);
                    }
                }
            }
            _ => unreachable!("`execute` dispatches only collective instructions here"),
        }
        Ok(())
    }

    /// Under independent thread scheduling, a `.sync` collective whose group lacks live lanes
    /// of its membermask (read from the group's first lane) waits for them.
    fn member_wait(&self, w: &Warp, inst: &Inst) -> Option<Flow> {
        if !self.prog.member_mask_waits || !w.simt.independent_threads() {
            return None;
        }
        let (key, mask) = collective_key(&inst.op)?;
        let active = w.simt.active_mask();
        let l0 = lanes(active).next()?;
        let members = self.val(w, mask, l0) & w.valid;
        (members & !active & !w.simt.exited_mask() != 0)
            .then_some(Flow::CollectiveWait { members, key })
    }

    fn exec_shfl(&self, w: &mut Warp, exec: Mask, mode: ShflMode, sites: &Sites) {
        // PTX ISA shfl.sync pseudocode: c packs the clamp (bits 0..4) and segment mask (8..12).
        let parts = |l: usize| match &sites.at(l).op {
            Op::Shfl { d, p, a, b, c, .. } => (*d, *p, a, b, c),
            _ => unreachable!("matching collectives are shuffles"),
        };
        let ws = w.warp_size as u64;
        let src: Vec<u64> = (0..w.warp_size as usize)
            .map(|l| self.val(w, parts(l).2, l))
            .collect();
        let mut results = Vec::with_capacity(exec.count_ones() as usize);
        for l in lanes(exec) {
            let (_, _, _, b, c) = parts(l);
            let bv = self.val(w, b, l) & 0x1f;
            let cv = self.val(w, c, l);
            let clamp = cv & 0x1f;
            let seg = (cv >> 8) & 0x1f;
            let lane = l as u64;
            let max_lane = (lane & seg) | (clamp & !seg);
            let min_lane = lane & seg;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane as i64 - bv as i64;
                    (j, j >= max_lane as i64)
                }
                ShflMode::Down => {
                    let j = (lane + bv) as i64;
                    (j, j <= max_lane as i64)
                }
                ShflMode::Bfly => {
                    let j = (lane ^ bv) as i64;
                    (j, j <= max_lane as i64)
                }
                ShflMode::Idx => {
                    let j = (min_lane | (bv & !seg)) as i64;
                    (j, j <= max_lane as i64)
                }
            };
            let ok = ok && j >= 0 && (j as u64) < ws;
            let srcl = if ok { j as usize } else { l };
            results.push((l, src[srcl], ok));
        }
        for (l, v, ok) in results {
            let (d, p, ..) = parts(l);
            w.write(d.0, l, v & 0xFFFF_FFFF);
            if let Some(p) = p {
                w.write(p.0, l, ok as u64);
            }
        }
    }
}
