//! A kernel's static shared memory. ptxas gives each entry function its own segment holding
//! only the `.shared` variables that the entry and the functions it calls name or declare in
//! their bodies
//! (NVRTC writes a CUDA kernel's `__shared__` arrays as module-scope `.shared` declarations, so
//! a file of several kernels declares all of their arrays side by side); a CTA of one kernel
//! does not hold the others'. This is a fact of the PTX toolchain that the simulator and the
//! models both read.

use crate::ir::*;

/// Where one kernel's `.shared` variables live in a CTA's shared memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedLayout {
    /// Per symbol of the module: its offset when the kernel holds it.
    offsets: Vec<Option<u64>>,
    /// Bytes of the kernel's static `.shared` variables, as placed.
    pub static_bytes: u64,
    /// Where the dynamic window (every `.extern .shared` array) starts: after the static data,
    /// rounded up to the largest alignment an `.extern .shared` array the kernel names asks for.
    /// ptxas pads the static segment so (`-v` reports 80 bytes of static mbarriers under
    /// `.extern .shared .align 128` as 128 bytes of smem, under `.align 1024` as 1024).
    pub dynamic_offset: u64,
}

impl SharedLayout {
    /// The offset of a static `.shared` variable in the kernel's segment, or the dynamic
    /// window's for an `.extern .shared` array; `None` for a variable the kernel cannot name.
    pub fn offset(&self, s: SymbolId) -> Option<u64> {
        self.offsets.get(s.0 as usize).copied().flatten()
    }
}

impl Module {
    /// The functions a thread of `entry` may run: the entry and every function it calls,
    /// transitively, in id order. An indirect call may reach any `.func` of the module.
    pub fn reachable_functions(&self, entry: FuncId) -> Vec<FuncId> {
        let mut seen = vec![false; self.functions.len()];
        let mut stack = vec![entry];
        while let Some(f) = stack.pop() {
            let Some(done) = seen.get_mut(f.0 as usize) else {
                continue;
            };
            if std::mem::replace(done, true) {
                continue;
            }
            let func = self.function(f);
            stack.extend(func.callees.iter().copied());
            if calls_indirectly(func) {
                stack.extend(
                    (0..self.functions.len() as u32)
                        .map(FuncId)
                        .filter(|&g| self.function(g).kind == FuncKind::Func),
                );
            }
        }
        (0..self.functions.len() as u32)
            .map(FuncId)
            .filter(|f| seen[f.0 as usize])
            .collect()
    }

    /// `entry`'s shared segment: the static `.shared` variables its threads can name, in
    /// declaration order at their alignments, then the dynamic window.
    pub fn shared_layout(&self, entry: FuncId) -> SharedLayout {
        let mut named = vec![false; self.symbols.len()];
        for f in self.reachable_functions(entry) {
            for s in &self.function(f).uses {
                named[s.0 as usize] = true;
            }
        }
        let mut offsets = vec![None; self.symbols.len()];
        let mut end = 0u64;
        let mut window_align = 1u64;
        for (i, s) in self.symbols.iter().enumerate() {
            if !named[i] || s.space != Space::Shared {
                continue;
            }
            let align = u64::from(s.align.max(1));
            if s.is_extern {
                window_align = window_align.max(align);
                continue;
            }
            let at = end.div_ceil(align).saturating_mul(align);
            offsets[i] = Some(at);
            end = at.saturating_add(s.size());
        }
        let dynamic_offset = end.div_ceil(window_align).saturating_mul(window_align);
        for (i, s) in self.symbols.iter().enumerate() {
            if named[i] && s.space == Space::Shared && s.is_extern {
                offsets[i] = Some(dynamic_offset);
            }
        }
        SharedLayout {
            offsets,
            static_bytes: end,
            dynamic_offset,
        }
    }
}

fn calls_indirectly(f: &Function) -> bool {
    f.body.iter().any(|i| {
        matches!(
            i.op,
            Op::Call {
                callee: Callee::Indirect { .. },
                ..
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::parse_module;

    /// Two kernels of one module, as NVRTC writes them: each `__shared__` array a module-scope
    /// `.shared` declaration. `b` calls `f`, which names `fs`; only `b` names the window.
    const TWO_KERNELS: &str = r#"
.version 8.0
.target sm_90a
.address_size 64
.shared .align 4 .b8 big[40000];
.shared .align 8 .b8 small[60];
.shared .align 16 .b8 fs[16];
.shared .align 4 .b8 unused[4];
.extern .shared .align 128 .b8 dyn[];
.func f()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, fs;
  ret;
}
.visible .entry a()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, big;
  ret;
}
.visible .entry b()
{
  .reg .b32 %r<3>;
  mov.u32 %r1, small;
  mov.u32 %r2, dyn;
  call f, ();
  ret;
}
"#;

    fn id(m: &crate::Module, name: &str) -> crate::FuncId {
        m.find_function(name).unwrap()
    }

    fn sym(m: &crate::Module, name: &str) -> crate::SymbolId {
        let i = m.symbols.iter().position(|s| s.name == name).unwrap();
        crate::SymbolId(i as u32)
    }

    #[test]
    fn each_kernel_holds_only_the_shared_variables_it_and_its_callees_name() {
        let m = parse_module("two.ptx", TWO_KERNELS).unwrap();
        let a = m.shared_layout(id(&m, "a"));
        assert_eq!(a.offset(sym(&m, "big")), Some(0));
        assert_eq!(a.offset(sym(&m, "small")), None);
        assert_eq!(a.offset(sym(&m, "fs")), None);
        assert_eq!((a.static_bytes, a.dynamic_offset), (40000, 40000));

        let b = m.shared_layout(id(&m, "b"));
        assert_eq!(b.offset(sym(&m, "big")), None);
        assert_eq!(b.offset(sym(&m, "small")), Some(0));
        // 60 rounded up to fs's 16-byte alignment.
        assert_eq!(b.offset(sym(&m, "fs")), Some(64));
        assert_eq!(b.offset(sym(&m, "unused")), None);
        assert_eq!(b.static_bytes, 80);
        // The window after the statics at its 128-byte alignment.
        assert_eq!(b.dynamic_offset, 128);
        assert_eq!(b.offset(sym(&m, "dyn")), Some(128));
    }

    /// A `.shared` array declared in a kernel's body is the kernel's even when no instruction
    /// names it (hand-written Hopper kernels address it through descriptors).
    #[test]
    fn a_body_declaration_belongs_to_its_kernel_named_or_not() {
        let src = ".version 8.0\n.target sm_90a\n.address_size 64\n.shared .b8 other[64];\n.visible .entry k()\n{\n  .shared .align 1024 .b8 smem[4096];\n  ret;\n}\n";
        let m = parse_module("body.ptx", src).unwrap();
        let l = m.shared_layout(id(&m, "k"));
        assert_eq!(l.offset(sym(&m, "smem")), Some(0));
        assert_eq!(l.offset(sym(&m, "other")), None);
        assert_eq!(l.static_bytes, 4096);
    }

    #[test]
    fn reachable_functions_follow_calls() {
        let m = parse_module("two.ptx", TWO_KERNELS).unwrap();
        assert_eq!(m.reachable_functions(id(&m, "a")), vec![id(&m, "a")]);
        let mut want = vec![id(&m, "f"), id(&m, "b")];
        want.sort();
        assert_eq!(m.reachable_functions(id(&m, "b")), want);
    }
}
