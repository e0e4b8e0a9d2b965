//! Data instructions: moves, arithmetic, comparisons, selects and conversions, lane by lane
//! through the pure semantics of `gpusim_isa::semantics`.

use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_alu(&mut self, w: &mut Warp, inst: &Inst, exec: Mask) -> Result<(), Fault> {
        match &inst.op {
            Op::Mov { d, a, ty } => {
                let sa = self.src(w, a);
                let row = w.slot(d.0) * w.warp_size as usize;
                for l in lanes(exec) {
                    w.regs[row + l] = self.get(w, &sa, l) & ty.mask();
                }
            }
            Op::MovPack { ty, d, parts } => {
                let n = parts.len as u32;
                let bits = ty.bits() / n;
                for l in lanes(exec) {
                    let mut v = 0u64;
                    for (i, p) in parts.as_slice().iter().enumerate() {
                        let part = self.val(w, p, l)
                            & if bits >= 64 {
                                u64::MAX
                            } else {
                                (1 << bits) - 1
                            };
                        v |= part << (bits * i as u32);
                    }
                    w.write(d.0, l, v);
                }
            }
            Op::MovUnpack { ty, d, a } => {
                let n = d.len as u32;
                let bits = ty.bits() / n;
                for l in lanes(exec) {
                    let v = self.val(w, a, l);
                    for (i, r) in d.as_slice().iter().enumerate() {
                        let part = (v >> (bits * i as u32))
                            & if bits >= 64 {
                                u64::MAX
                            } else {
                                (1 << bits) - 1
                            };
                        w.write(r.0, l, part);
                    }
                }
            }
            Op::Arith {
                op,
                ty,
                mods,
                d,
                a,
                b,
                c,
            } => {
                let (sa, sb, sc) = (self.src(w, a), self.src(w, b), self.src(w, c));
                let row = w.slot(d.0) * w.warp_size as usize;
                for l in lanes(exec) {
                    let (x, y, z) = (
                        self.get(w, &sa, l),
                        self.get(w, &sb, l),
                        self.get(w, &sc, l),
                    );
                    w.regs[row + l] = sem::arith(*op, *ty, *mods, x, y, z);
                }
            }
            Op::Carry {
                op,
                ty,
                cc_in,
                cc_out,
                cc,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let ci = if *cc_in { w.read(cc.0, l) & 1 } else { 0 };
                    let (r, co) = sem::carry_op(
                        *op,
                        *ty,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                        ci,
                    );
                    w.write(d.0, l, r);
                    if *cc_out {
                        w.write(cc.0, l, co);
                    }
                }
            }
            Op::Bfind { ty, shiftamt, d, a } => {
                for l in lanes(exec) {
                    let v = sem::bfind(*ty, *shiftamt, self.val(w, a, l));
                    w.write(d.0, l, v);
                }
            }
            Op::Shf {
                left,
                clamp,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let v = sem::shf(
                        *left,
                        *clamp,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Bfi {
                ty,
                d,
                a,
                b,
                pos,
                len,
            } => {
                for l in lanes(exec) {
                    let v = sem::bfi(
                        *ty,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, pos, l),
                        self.val(w, len, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Setp {
                cmp,
                ty,
                ftz,
                p,
                q,
                a,
                b,
                comb,
            } => {
                let (sa, sb) = (self.src(w, a), self.src(w, b));
                for l in lanes(exec) {
                    let t = sem::compare(*cmp, *ty, *ftz, self.get(w, &sa, l), self.get(w, &sb, l));
                    let (r1, r2) = match comb {
                        Some((op, c)) => {
                            let cv = self.val(w, c, l) & 1 == 1;
                            (sem::combine(*op, t, cv), sem::combine(*op, !t, cv))
                        }
                        None => (t, !t),
                    };
                    w.write(p.0, l, r1 as u64);
                    if let Some(q) = q {
                        w.write(q.0, l, r2 as u64);
                    }
                }
            }
            Op::Set {
                cmp,
                dty,
                sty,
                ftz,
                d,
                a,
                b,
                comb,
            } => {
                for l in lanes(exec) {
                    let mut t =
                        sem::compare(*cmp, *sty, *ftz, self.val(w, a, l), self.val(w, b, l));
                    if let Some((op, c)) = comb {
                        t = sem::combine(*op, t, self.val(w, c, l) & 1 == 1);
                    }
                    w.write(d.0, l, sem::set_value(*dty, t));
                }
            }
            Op::Selp { ty, d, a, b, c } => {
                for l in lanes(exec) {
                    let v = if self.val(w, c, l) & 1 == 1 {
                        self.val(w, a, l)
                    } else {
                        self.val(w, b, l)
                    };
                    w.write(d.0, l, v & ty.mask());
                }
            }
            Op::Slct {
                dty,
                cty,
                ftz,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let v = sem::slct(
                        *dty,
                        *cty,
                        *ftz,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Cvt {
                dty,
                sty,
                mods,
                d,
                a,
            } => {
                let dst_ty = self.prog.module.function(w.func()).regs[d.0 as usize].ty;
                for l in lanes(exec) {
                    let v = sem::convert(*dty, *sty, *mods, self.val(w, a, l));
                    w.write(d.0, l, sem::extend_to_register(*dty, dst_ty, v));
                }
            }
            Op::Cvta {
                to_space,
                space,
                ty,
                d,
                a,
            } => {
                let base = mem::window_base(*space);
                for l in lanes(exec) {
                    let v = self.val(w, a, l);
                    let r = if *to_space {
                        v.wrapping_sub(base)
                    } else {
                        v.wrapping_add(base)
                    };
                    w.write(d.0, l, r & ty.mask());
                }
            }
            Op::CvtPack { dty, mods, d, a, b } => {
                for l in lanes(exec) {
                    let v = sem::convert_pack(*dty, *mods, self.val(w, a, l), self.val(w, b, l));
                    w.write(d.0, l, v);
                }
            }
            Op::Lop3 {
                lut,
                d,
                a,
                b,
                c,
                pred,
            } => {
                for l in lanes(exec) {
                    let v = sem::lop3(
                        *lut,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                    // p = (d != 0) BoolOp q (PTX ISA 8.x §9.7.7.6).
                    if let Some((op, p, q)) = pred {
                        let q = self.val(w, q, l) & 1 == 1;
                        w.write(p.0, l, sem::combine(*op, v != 0, q) as u64);
                    }
                }
            }
            Op::Dot {
                kind,
                a_signed,
                b_signed,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let v = sem::dot(
                        *kind,
                        *a_signed,
                        *b_signed,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Testp { op, ty, p, a } => {
                for l in lanes(exec) {
                    let v = sem::testp(*op, *ty, self.val(w, a, l));
                    w.write(p.0, l, v as u64);
                }
            }
            Op::Isspacep { space, p, a } => {
                // The windows are the simulator's generic address map (`crate::mem`); the
                // .param window lies inside the .global one (PTX ISA 8.x `isspacep`).
                for l in lanes(exec) {
                    let (s, _) = decode_generic(self.val(w, a, l));
                    let v = match space {
                        Space::Global => matches!(s, Space::Global | Space::Param),
                        other => s == *other,
                    };
                    w.write(p.0, l, v as u64);
                }
            }
            _ => unreachable!("`execute` dispatches only alu instructions here"),
        }
        Ok(())
    }
}
