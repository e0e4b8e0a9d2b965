//! Control instructions: their per-lane targets become a `Flow` for the reconvergence policy;
//! calls push frames and copy `.param` arguments, returns copy results back.

use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_control(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        out: &mut Executed,
    ) -> Result<(), Fault> {
        let pc = w.pc();
        match &inst.op {
            Op::Bra { target, .. } => {
                if exec != 0 {
                    out.flow = Flow::Jump {
                        target: *target,
                        taken: exec,
                        is_call: false,
                    };
                    out.backedge = *target <= pc;
                }
            }
            Op::BrxIdx { index, targets, .. } => {
                let mut groups: Vec<(Pc, Mask)> = Vec::new();
                for l in lanes(exec) {
                    let i = self.val(w, index, l) as usize;
                    let Some(&t) = targets.get(i) else {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::OutOfBounds,
                            format!("brx.idx index {i} outside its table of {}", targets.len()),
                        ));
                    };
                    match groups.iter_mut().find(|g| g.0 == t) {
                        Some(g) => g.1 |= 1 << l,
                        None => groups.push((t, 1 << l)),
                    }
                }
                groups.sort_by_key(|g| g.0);
                out.backedge = groups.iter().any(|g| g.0 <= pc);
                out.flow = match groups.len() {
                    0 => Flow::Next,
                    1 => Flow::Jump {
                        target: groups[0].0,
                        taken: groups[0].1,
                        is_call: false,
                    },
                    _ => Flow::Multi {
                        groups,
                        is_call: false,
                    },
                };
            }
            Op::Call {
                callee, rets, args, ..
            } => {
                if exec != 0 {
                    out.flow = self.exec_call(w, inst, exec, callee, rets, args)?;
                }
            }
            Op::Ret { .. } => {
                if exec != 0 {
                    let f = self.prog.module.function(w.func());
                    if f.kind == FuncKind::Entry || w.frames.len() == 1 {
                        out.flow = Flow::Disable(Reason::Exit, exec);
                    } else {
                        self.copy_returns(w, exec);
                        out.flow = Flow::Disable(Reason::Return, exec);
                    }
                }
            }
            Op::Exit => {
                if exec != 0 {
                    out.flow = Flow::Disable(Reason::Exit, exec);
                }
            }
            Op::Trap => {
                if exec != 0 {
                    let l = exec.trailing_zeros() as usize;
                    return Err(self.fault(w, inst, l, FaultKind::Trap, "trap executed".into()));
                }
            }
            Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } => {
                if exec != 0 {
                    let kind = match inst.op {
                        Op::Ssy { .. } => TokenKind::Sync,
                        Op::PreBrk { .. } => TokenKind::Break,
                        _ => TokenKind::Call,
                    };
                    out.flow = Flow::Push(kind, *target);
                }
            }
            Op::Sync => {
                if exec != 0 {
                    out.flow = Flow::Sync;
                }
            }
            Op::Brk => {
                if exec != 0 {
                    out.flow = Flow::Disable(Reason::Break, exec);
                }
            }
            _ => unreachable!("`execute` dispatches only control instructions here"),
        }
        Ok(())
    }

    fn exec_call(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        callee: &Callee,
        rets: &[SymbolId],
        args: &[Operand],
    ) -> Result<Flow, Fault> {
        let (target_fn, taken, flow) = match callee {
            Callee::Direct(f) => (
                *f,
                exec,
                Flow::Jump {
                    target: 0,
                    taken: exec,
                    is_call: true,
                },
            ),
            Callee::Indirect { reg, .. } => {
                let mut groups: Vec<(u32, Mask)> = Vec::new();
                for l in lanes(exec) {
                    let f = w.read(reg.0, l) as u32;
                    if f as usize >= self.prog.module.functions.len()
                        || self.prog.module.functions[f as usize].body.is_empty()
                    {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::OutOfBounds,
                            format!(
                                "indirect call to {f:#x}, which is not a function of this module"
                            ),
                        ));
                    }
                    match groups.iter_mut().find(|g| g.0 == f) {
                        Some(g) => g.1 |= 1 << l,
                        None => groups.push((f, 1 << l)),
                    }
                }
                groups.sort_by_key(|g| g.0);
                let (f, m) = groups[0];
                let flow = if groups.len() == 1 {
                    Flow::Jump {
                        target: 0,
                        taken: m,
                        is_call: true,
                    }
                } else {
                    Flow::Multi {
                        groups: vec![(0, m)],
                        is_call: true,
                    }
                };
                (FuncId(f), m, flow)
            }
        };
        let caller = self.prog.module.function(w.func());
        let callee_f = self.prog.module.function(target_fn);
        if callee_f.params.len() != args.len() || callee_f.rets.len() != rets.len() {
            let l = taken.trailing_zeros() as usize;
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Control,
                format!(
                    "call of `{}` with {} arguments and {} results; it takes {} and {}",
                    callee_f.name,
                    args.len(),
                    rets.len(),
                    callee_f.params.len(),
                    callee_f.rets.len()
                ),
            ));
        }
        let caller_base = w.frame().local_base as u64;
        let (caller_regs, caller_bytes) = (caller.regs.len() as u32, caller.frame_bytes);
        // The callee's frame sits right above the caller's (see `Warp::push_frame`).
        let callee_base = caller_base + caller_bytes as u64;
        for (p, a) in callee_f.params.iter().zip(args) {
            let dst = callee_base + self.prog.module.symbol(p.symbol).offset;
            let size = p.size() as u64;
            for l in lanes(taken) {
                let bytes: Vec<u8> = match a {
                    Operand::Symbol(s) if matches!(self.prog.locs[s.0 as usize], Loc::Frame(_)) => {
                        let src = caller_base + self.prog.module.symbol(*s).offset;
                        (0..size)
                            .map(|i| w.local[l].get((src + i) as usize).copied().unwrap_or(0))
                            .collect()
                    }
                    other => self.val(w, other, l).to_le_bytes()[..size.min(8) as usize].to_vec(),
                };
                self.write_local(w, inst, l, dst, &bytes)?;
            }
        }
        w.push_frame(
            target_fn,
            callee_f.regs.len() as u32,
            caller_regs,
            caller_bytes,
            rets.to_vec(),
        );
        Ok(flow)
    }

    /// `ret` in a function: copy its return parameters into the caller's variables.
    fn copy_returns(&self, w: &mut Warp, exec: Mask) {
        let f = self.prog.module.function(w.func());
        let n = w.frames.len();
        let (callee_base, dsts) = (
            w.frames[n - 1].local_base as u64,
            w.frames[n - 1].ret_dst.clone(),
        );
        let caller_base = w.frames[n - 2].local_base as u64;
        for (p, dst) in f.rets.iter().zip(dsts) {
            let src = callee_base + self.prog.module.symbol(p.symbol).offset;
            let dst = caller_base + self.prog.module.symbol(dst).offset;
            let size = p.size() as usize;
            for l in lanes(exec) {
                let loc = &mut w.local[l];
                let need = (src as usize + size).max(dst as usize + size);
                if loc.len() < need {
                    loc.resize(need, 0);
                }
                loc.copy_within(src as usize..src as usize + size, dst as usize);
            }
        }
    }
}
