//! Memory instructions: ld, st, atom/red, with the generic-address windows, bounds and
//! alignment faults, and per-lane local memory. Each lane's effective access is recorded in the
//! warp's scratch buffer and coalesced into a `MemSummary` (`mem::coalesce`).

use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_memory(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        w.mem_accesses.clear();
        let mut first_space = None;
        match &inst.op {
            Op::Ld {
                space, ty, d, addr, ..
            } => self.exec_ld(w, inst, exec, *space, *ty, d, addr, &mut first_space)?,
            Op::St {
                space,
                ty,
                addr,
                src,
                ..
            } => {
                let size = ty.size();
                for l in lanes(exec) {
                    let bytes = size * src.len as u32;
                    let (sp, base) = self.vector_base(w, inst, l, *space, addr, bytes, "store")?;
                    self.record(w, &mut first_space, l, sp, base, bytes);
                    for (i, s) in src.as_slice().iter().enumerate() {
                        let v = self.val(w, s, l);
                        let at = Access {
                            lane: l,
                            space: sp,
                            addr: base + (i as u64) * size as u64,
                            size,
                        };
                        self.store(w, inst, at, v & mask_bytes(size))?;
                    }
                }
            }
            Op::Atom {
                space,
                op,
                ty,
                d,
                addr,
                b,
                c,
            } => {
                let size = ty.size();
                // Lanes of one warp are serialised in lane order: a valid refinement of the
                // formal model, which allows any order (§2.7).
                for l in lanes(exec) {
                    let (sp, a) = self.effective(w, *space, addr, l);
                    if !matches!(sp, Space::Global | Space::Shared) {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::OutOfBounds,
                            format!("atomic on {} space at {a:#x}", sp.name()),
                        ));
                    }
                    self.record(w, &mut first_space, l, sp, a, size);
                    let at = Access {
                        lane: l,
                        space: sp,
                        addr: a,
                        size,
                    };
                    let old = self.load(w, inst, at)?;
                    let bv = self.val(w, b, l);
                    let cv = c.map(|c| self.val(w, &c, l)).unwrap_or(0);
                    let new = sem::atomic(*op, *ty, old, bv, cv);
                    self.store(w, inst, at, new & mask_bytes(size))?;
                    if let Some(d) = d {
                        w.write(d.0, l, old);
                    }
                }
            }
            _ => unreachable!("`execute` dispatches only memory instructions here"),
        }
        Ok(first_space.map(|space| self.summarise(w, space)))
    }

    /// Record lane `lane`'s access for the coalescer if it is in the instruction's space (that
    /// of its first lane). Local addresses are interleaved across lanes as hardware lays them
    /// out (`coalesce::local_interleave`).
    fn record(
        &self,
        w: &mut Warp,
        first: &mut Option<Space>,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
    ) {
        if *first.get_or_insert(space) != space {
            return;
        }
        let addr = match space {
            Space::Local => mem::coalesce::local_interleave(addr, lane as u32, w.warp_size),
            _ => addr,
        };
        w.mem_accesses.push(mem::coalesce::LaneAccess {
            lane: lane as u32,
            addr,
            size,
        });
    }

    /// The coalescer's summary of the accesses recorded for this instruction.
    fn summarise(&self, w: &mut Warp, space: Space) -> MemSummary {
        let g = &self.coalescer;
        let (acc, keys) = (&w.mem_accesses, &mut w.mem_keys);
        if space == Space::Shared {
            MemSummary {
                space,
                sectors: 0,
                lines: 0,
                conflict_degree: mem::coalesce::conflict_degree(acc, g, keys),
            }
        } else {
            let t = mem::coalesce::sectors(acc, g, keys);
            MemSummary {
                space,
                sectors: t.sectors,
                lines: t.lines,
                conflict_degree: 1,
            }
        }
    }

    /// The fault for a misaligned or out-of-bounds access `at` (`what` is "load" or "store").
    fn access_fault(
        &self,
        w: &Warp,
        inst: &Inst,
        at: Access,
        kind: FaultKind,
        what: &str,
    ) -> Fault {
        let Access {
            lane,
            space,
            addr,
            size,
        } = at;
        let msg = match kind {
            FaultKind::Misaligned => format!(
                "misaligned {size}-byte {} {what} at address {addr:#x}",
                space.name()
            ),
            _ => format!(
                "out-of-bounds {size}-byte {} {what} at address {addr:#x}{}",
                space.name(),
                self.nearest(space, addr)
            ),
        };
        self.fault(w, inst, lane, kind, msg)
    }

    /// The lane's local-memory bytes of `at`, grown on first touch up to the per-thread limit.
    fn local_slot<'w>(&self, w: &'w mut Warp, at: Access) -> Option<&'w mut [u8]> {
        let end = at.addr.checked_add(at.size as u64)?;
        if end > self.local_limit as u64 {
            return None;
        }
        let l = &mut w.local[at.lane];
        if l.len() < end as usize {
            l.resize(end as usize, 0);
        }
        Some(&mut l[at.addr as usize..end as usize])
    }

    fn load(&mut self, w: &mut Warp, inst: &Inst, at: Access) -> Result<u64, Fault> {
        let (space, addr, n) = (at.space, at.addr, at.size as u64);
        if addr % n != 0 {
            return Err(self.access_fault(w, inst, at, FaultKind::Misaligned, "load"));
        }
        let range = addr as usize..(addr + n) as usize;
        let bytes: Option<&[u8]> = match space {
            Space::Global | Space::Generic => self.global.bytes(addr, n),
            Space::Shared => self.shared.get(range),
            Space::Const => self.consts.get(range),
            Space::Param => self.params.get(range),
            Space::Local => match self.local_slot(w, at) {
                Some(slot) => return Ok(load_le(slot)),
                None => None,
            },
        };
        match bytes {
            Some(b) => Ok(load_le(b)),
            None => Err(self.access_fault(w, inst, at, FaultKind::OutOfBounds, "load")),
        }
    }

    fn store(&mut self, w: &mut Warp, inst: &Inst, at: Access, v: u64) -> Result<(), Fault> {
        let (space, addr, n) = (at.space, at.addr, at.size as u64);
        if addr % n != 0 {
            return Err(self.access_fault(w, inst, at, FaultKind::Misaligned, "store"));
        }
        if matches!(space, Space::Const | Space::Param) {
            let msg = format!("store to read-only {} space at {addr:#x}", space.name());
            return Err(self.fault(w, inst, at.lane, FaultKind::OutOfBounds, msg));
        }
        let slot: Option<&mut [u8]> = match space {
            Space::Global | Space::Generic => self.global.bytes_mut(addr, n),
            Space::Shared => self.shared.get_mut(addr as usize..(addr + n) as usize),
            _ => self.local_slot(w, at),
        };
        let Some(slot) = slot else {
            return Err(self.access_fault(w, inst, at, FaultKind::OutOfBounds, "store"));
        };
        let changed = load_le(slot) != v & mask_bytes(at.size);
        store_le(slot, v);
        // A changed value is progress (livelock detection watches the epoch).
        if changed {
            *self.epoch += 1;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_ld(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        space: Space,
        ty: Type,
        d: &RegVec,
        addr: &Address,
        first_space: &mut Option<Space>,
    ) -> Result<(), Fault> {
        let size = ty.size();
        let f = self.prog.module.function(w.func());
        for l in lanes(exec) {
            let bytes = size * d.len as u32;
            let (sp, base) = self.vector_base(w, inst, l, space, addr, bytes, "load")?;
            self.record(w, first_space, l, sp, base, bytes);
            for (i, r) in d.as_slice().iter().enumerate() {
                let at = Access {
                    lane: l,
                    space: sp,
                    addr: base + (i as u64) * size as u64,
                    size,
                };
                let mut v = self.load(w, inst, at)?;
                let rty = f.regs[r.0 as usize].ty;
                if ty.is_signed() && rty.bits() > ty.bits() {
                    v = sign_extend(v, ty.bits()) & rty.mask();
                }
                w.write(r.0, l, v);
            }
        }
        Ok(())
    }

    /// The space and first address of a (vector) access of `bytes` bytes, which must be
    /// aligned to its whole size (PTX ISA: vector accesses are aligned to the vector size).
    #[allow(clippy::too_many_arguments)]
    fn vector_base(
        &self,
        w: &Warp,
        inst: &Inst,
        lane: usize,
        space: Space,
        addr: &Address,
        bytes: u32,
        what: &str,
    ) -> Result<(Space, u64), Fault> {
        let (sp, base) = self.effective(w, space, addr, lane);
        if base % bytes as u64 != 0 {
            let msg = format!("misaligned {bytes}-byte {} {what} at {base:#x}", sp.name());
            return Err(self.fault(w, inst, lane, FaultKind::Misaligned, msg));
        }
        Ok((sp, base))
    }

    /// For a global fault: the allocation nearest to `addr`, so the user sees which buffer the
    /// access ran off.
    fn nearest(&self, space: Space, addr: u64) -> String {
        if !matches!(space, Space::Global | Space::Generic) {
            return String::new();
        }
        match self.global.nearest(addr) {
            Some(a) => format!(
                " (nearest buffer `{}`: {} bytes at {:#x}..{:#x})",
                a.name,
                a.len,
                a.start,
                a.start + a.len
            ),
            None => " (no buffer is allocated)".to_string(),
        }
    }

    pub(super) fn write_local(
        &self,
        w: &mut Warp,
        inst: &Inst,
        lane: usize,
        addr: u64,
        bytes: &[u8],
    ) -> Result<(), Fault> {
        let at = Access {
            lane,
            space: Space::Local,
            addr,
            size: bytes.len() as u32,
        };
        match self.local_slot(w, at) {
            Some(slot) => {
                slot.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(self.fault(w, inst, lane, FaultKind::OutOfBounds, format!("local memory exhausted (frame at {addr:#x}; sm.local_bytes_per_thread is {}): recursion too deep?", self.local_limit))),
        }
    }
}
