//! Warp collectives over the lanes that execute them: shfl, vote, match, activemask.

use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_collective(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        let active = w.simt.active_mask();
        match &inst.op {
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
                ..
            } => self.exec_shfl(w, exec, *mode, *d, *p, a, b, c),
            Op::Vote { mode, d, a, .. } => {
                let mut trues = 0u64;
                for l in lanes(exec) {
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
                    w.write(d.0, l, v);
                }
            }
            Op::Match {
                mode, ty, d, p, a, ..
            } => {
                let vals: Vec<(usize, u64)> = lanes(exec)
                    .map(|l| (l, self.val(w, a, l) & ty.mask()))
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
            Op::Redux { op, ty, d, a, mask } => {
                // The reduction runs over the executing lanes named in membermask (read from
                // the first executing lane); every executing lane receives it. PTX leaves an
                // executing lane outside membermask undefined.
                if let Some(l0) = lanes(exec).next() {
                    let members = exec & self.val(w, mask, l0);
                    let v = sem::redux(*op, *ty, lanes(members).map(|l| self.val(w, a, l)));
                    for l in lanes(exec) {
                        w.write(d.0, l, v);
                    }
                }
            }
            _ => unreachable!("`execute` dispatches only collective instructions here"),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_shfl(
        &self,
        w: &mut Warp,
        exec: Mask,
        mode: ShflMode,
        d: RegId,
        p: Option<RegId>,
        a: &Operand,
        b: &Operand,
        c: &Operand,
    ) {
        // PTX ISA shfl.sync pseudocode: c packs the clamp (bits 0..4) and segment mask (8..12).
        let ws = w.warp_size as u64;
        let src: Vec<u64> = (0..w.warp_size as usize)
            .map(|l| self.val(w, a, l))
            .collect();
        let mut results = Vec::with_capacity(exec.count_ones() as usize);
        for l in lanes(exec) {
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
            w.write(d.0, l, v & 0xFFFF_FFFF);
            if let Some(p) = p {
                w.write(p.0, l, ok as u64);
            }
        }
    }
}
