//! `ldmatrix` / `stmatrix` (`.m8n8.b16`) as warp collectives: lanes 8i..8i+7 give the row
//! addresses of matrix i in shared memory, `isa::semantics::{ldmatrix, stmatrix}` move the
//! elements between those rows and the lanes' registers, and the rows' accesses (one 16-byte
//! access per addressing lane) run the `ld.shared` / `st.shared` program and are timed on the
//! ldst unit by the coalescer's bank-conflict degree, like a `.v4` shared access.

use super::memory::{Prog, Timing};
use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_matrix(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        let (name, num, trans, space, addr, regs) = match &inst.op {
            Op::Ldmatrix {
                num,
                trans,
                space,
                d,
                addr,
            } => ("ldmatrix", *num, *trans, *space, addr, d),
            Op::Stmatrix {
                num,
                trans,
                space,
                addr,
                src,
            } => ("stmatrix", *num, *trans, *space, addr, src),
            _ => unreachable!("`execute` dispatches only ldmatrix and stmatrix here"),
        };
        // A guard false on every lane skips it uniformly, which `.aligned` allows.
        if exec == 0 {
            return Ok(None);
        }
        self.require_full_warp(w, inst, exec, &format!("{name}.sync"))?;
        w.mem_accesses.clear();
        w.mem_global.clear();
        w.mem_lanes.clear();
        let rows = sem::MATRIX_ROWS * num as usize;
        let mut first_space = None;
        let mut at = [0u64; sem::MATRIX_LANES];
        for (l, row_addr) in at.iter_mut().enumerate().take(rows) {
            let (sp, a) = self.effective(w, space, addr, l);
            if sp != Space::Shared {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::OutOfBounds,
                    format!(
                        "`{name}` row address {a:#x} of lane {l} is in {} space, not shared",
                        sp.name()
                    ),
                ));
            }
            // Each row is 16 contiguous bytes, aligned to 16 (PTX ISA: the row addresses
            // must be 16-byte aligned).
            if a % 16 != 0 {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::Misaligned,
                    format!("misaligned `{name}` row address {a:#x} of lane {l} (rows are 16-byte aligned)"),
                ));
            }
            let what = if name == "ldmatrix" { "load" } else { "store" };
            self.check(
                w,
                inst,
                Access {
                    lane: l,
                    space: sp,
                    addr: a,
                    size: 16,
                },
                what,
            )?;
            self.record(w, &mut first_space, l, sp, a, 16);
            w.mem_lanes.push((l as u32, sp, a, 16));
            *row_addr = a;
        }
        let kind = if name == "ldmatrix" { "ld" } else { "st" };
        let prog = Prog {
            kind,
            cop: None,
            volatile: false,
        };
        if name == "stmatrix" {
            let mut vals = [[0u32; 4]; sem::MATRIX_LANES];
            for (l, v) in vals.iter_mut().enumerate() {
                for (i, r) in regs.as_slice().iter().enumerate() {
                    v[i] = w.read(r.0, l) as u32;
                }
            }
            for (k, row) in sem::stmatrix(&vals, num as usize, trans).iter().enumerate() {
                let a = at[k] as usize;
                let mut bytes = [0u8; 16];
                for (j, e) in row.iter().enumerate() {
                    bytes[2 * j..2 * j + 2].copy_from_slice(&e.to_le_bytes());
                }
                // Rows at one address: the highest row's elements stay (a PTX data race).
                if self.shared[a..a + 16] != bytes {
                    self.shared[a..a + 16].copy_from_slice(&bytes);
                    *self.epoch += 1;
                }
            }
        }
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        let wrote = self.run_programs(w, inst, prog, first_space, &mut t, |_, _| {})?;
        if name == "ldmatrix" && wrote {
            let mut data = vec![[0u16; 8]; rows];
            for (k, row) in data.iter_mut().enumerate() {
                let a = at[k] as usize;
                for (j, e) in row.iter_mut().enumerate() {
                    *e = u16::from_le_bytes([self.shared[a + 2 * j], self.shared[a + 2 * j + 1]]);
                }
            }
            let out = sem::ldmatrix(&data, trans);
            for (l, v) in out.iter().enumerate() {
                for (i, r) in regs.as_slice().iter().enumerate() {
                    w.write(r.0, l, v[i] as u64);
                }
            }
        }
        Ok(first_space.map(|sp| self.summarise(w, sp, t.release, t.end)))
    }
}
