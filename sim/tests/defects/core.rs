//! Issue 11 regressions: the machine (scoreboard dependences, scheduler choices, fault
//! reports, outputs written up to a fault).

use crate::common::{config_path, root, temp_dir};
use gpusim::core::deps::deps_of;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Item 4: the scoreboard keeps every register an instruction names.

/// The registers and declarations every scoreboard kernel shares: `%rd1` is the global
/// buffer (16 KiB), `%r20` a 32-bit and `%rd2` a 64-bit shared address, `%rd3`/`%rd4` wgmma
/// descriptors of the (zeroed) 1024-byte aligned shared tile.
const PRELUDE: &str = "
    .reg .b32 %r<40>;
    .reg .f32 %f<140>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    .shared .align 1024 .b8 smem[40960];
    ld.param.u64 %rd0, [buf];
    cvta.to.global.u64 %rd1, %rd0;
    mov.u32 %r20, smem;
    mov.u64 %rd2, smem;
    shr.u64 %rd5, %rd2, 4;
    and.b64 %rd5, %rd5, 16383;
    or.b64 %rd3, %rd5, 4611686293305360384;
    add.u64 %rd4, %rd3, 512;
";

/// A many-operand instruction, the first and the last register it writes or reads, and the
/// PTX type to move such a register with.
struct Case {
    name: &'static str,
    target: &'static str,
    threads: u32,
    /// Functions the instruction calls.
    funcs: &'static str,
    inst: &'static str,
    first: &'static str,
    last: &'static str,
    ty: &'static str,
    /// The instruction writes `first`..`last` (else it reads them).
    writes: bool,
}

fn regs(prefix: &str, from: u32, to: u32) -> String {
    let v: Vec<String> = (from..=to).map(|i| format!("%{prefix}{i}")).collect();
    format!("{{{}}}", v.join(", "))
}

fn cases() -> Vec<Case> {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let wmma_mma = leak(format!(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {}, {}, {}, {};",
        regs("f", 0, 7),
        regs("r", 0, 7),
        regs("r", 8, 15),
        regs("f", 8, 15)
    ));
    let m884 = leak(format!(
        "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {}, {{%r0, %r1}}, {{%r2, %r3}}, {};",
        regs("f", 0, 7),
        regs("f", 8, 15)
    ));
    let m16816 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};";
    let wgmma_ss = leak(format!(
        "wgmma.fence.sync.aligned;\n    wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {}, %rd3, %rd4, %p1, 1, 1, 0, 0;",
        regs("f", 0, 127)
    ));
    let wgmma_rs = leak(format!(
        "wgmma.fence.sync.aligned;\n    wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {}, {{%r0, %r1, %r2, %r3}}, %rd4, %p1, 1, 1, 0;",
        regs("f", 0, 127)
    ));
    let params: Vec<String> = (0..14).map(|i| format!(".param .b32 a{i}")).collect();
    let callee = leak(format!(
        ".func g({})\n{{\n    ret;\n}}\n",
        params.join(", ")
    ));
    let args: Vec<String> = (0..14).map(|i| format!("%r{i}")).collect();
    let call = leak(format!("call g, ({});", args.join(", ")));
    let w = |name, target, threads, inst, first, last, ty| Case {
        name,
        target,
        threads,
        funcs: "",
        inst,
        first,
        last,
        ty,
        writes: true,
    };
    let r = |name, target, threads, inst, first, last, ty| Case {
        writes: false,
        ..w(name, target, threads, inst, first, last, ty)
    };
    vec![
        w("wmma.load.a", "sm_80", 32, "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];", "%r0", "%r7", "b32"),
        w("wmma.load.b", "sm_80", 32, "wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];", "%r0", "%r7", "b32"),
        w("wmma.load.c", "sm_80", 32, "wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1];", "%f0", "%f7", "f32"),
        w("wmma.load.c shared", "sm_80", 32, "wmma.load.c.sync.aligned.row.m16n16k16.shared.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%r20];", "%f0", "%f7", "f32"),
        r("wmma.store.d", "sm_80", 32, "wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1+4096], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "%f0", "%f7", "f32"),
        w("wmma.mma (d)", "sm_80", 32, wmma_mma, "%f0", "%f7", "f32"),
        r("wmma.mma (a, b, c)", "sm_80", 32, wmma_mma, "%r0", "%f15", "f32"),
        w("mma.m16n8k16 (d)", "sm_80", 32, m16816, "%f0", "%f3", "f32"),
        r("mma.m16n8k16 (a, b, c)", "sm_80", 32, m16816, "%r0", "%f7", "f32"),
        w("mma.m8n8k4 (d)", "sm_80", 32, m884, "%f0", "%f7", "f32"),
        r("mma.m8n8k4 (a, b, c)", "sm_80", 32, m884, "%r0", "%f15", "f32"),
        w("ld.v4", "sm_80", 32, "ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd1];", "%r0", "%r3", "b32"),
        r("st.v4", "sm_80", 32, "st.global.v4.u32 [%rd1+4096], {%r0, %r1, %r2, %r3};", "%r0", "%r3", "b32"),
        w("ld.shared.v4.f32", "sm_80", 32, "ld.shared.v4.f32 {%f0, %f1, %f2, %f3}, [%r20];", "%f0", "%f3", "f32"),
        w("ldmatrix.x4", "sm_80", 32, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%r20];", "%r0", "%r3", "b32"),
        r("stmatrix.x4", "sm_90a", 32, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r20], {%r0, %r1, %r2, %r3};", "%r0", "%r3", "b32"),
        w("wgmma m64n256k16 (d)", "sm_90a", 128, wgmma_ss, "%f0", "%f127", "f32"),
        r("wgmma m64n256k16 (a registers)", "sm_90a", 128, wgmma_rs, "%r0", "%r3", "b32"),
        Case {
            funcs: callee,
            ..r("call with 14 arguments", "sm_80", 32, call, "%r0", "%r13", "b32")
        },
    ]
}

/// Which register the kernel's dependent instruction names.
#[derive(Clone, Copy)]
enum Probe {
    First,
    Last,
    /// A register the instruction does not name.
    Unrelated,
}

/// The kernel of `c`: for a writing instruction, the instruction and then a store of the
/// probed register; for a reading one, a global load into the probed register and then the
/// instruction.
fn scoreboard_kernel(c: &Case, probe: Probe) -> String {
    let unrelated = if c.ty == "f32" { "%f139" } else { "%r39" };
    let reg = match probe {
        Probe::First => c.first,
        Probe::Last => c.last,
        Probe::Unrelated => unrelated,
    };
    let (before, after) = if c.writes {
        (
            String::new(),
            format!("st.global.{} [%rd1+12288], {reg};", c.ty),
        )
    } else {
        (
            format!("ld.global.{} {reg}, [%rd1+8192];", c.ty),
            String::new(),
        )
    };
    format!(
        ".version 8.0\n.target {}\n.address_size 64\n{}\n.visible .entry k(.param .u64 buf)\n{{{PRELUDE}    {before}\n    {}\n    {after}\n    ret;\n}}\n",
        c.target, c.funcs, c.inst
    )
}

/// Cycles of the one-CTA launch of `ptx` on the H100 config.
fn cycles_of(dir: &Path, tag: &str, ptx: &str, threads: u32) -> u64 {
    std::fs::write(dir.join(format!("{tag}.ptx")), ptx).unwrap();
    let m = dir.join(format!("{tag}.yaml"));
    std::fs::write(
        &m,
        format!(
            "kernel: {tag}.ptx\nlaunches:\n  - entry: k\n    grid: [1, 1, 1]\n    block: [{threads}, 1, 1]\n    args: [buf]\nbuffers:\n  buf: {{ dtype: f32, shape: [4096], init: {{ fill: 0.5 }} }}\n"
        ),
    )
    .unwrap();
    let out = gpusim::run_manifest(&m, Some(&config_path("hopper-h100")), &[])
        .unwrap_or_else(|e| panic!("{tag}: {e}\n{ptx}"));
    out.stats.totals.cycles
}

/// Issue 11 item 4: `wmma.load.c` with 8 destinations followed by a store of the 8th did not
/// wait (the scoreboard kept 12 reads and 4 writes). For every instruction with many
/// operands, a dependence on its last register costs as much as one on its first, and more
/// than none.
#[test]
fn the_scoreboard_waits_on_the_last_register_of_every_many_operand_instruction() {
    let dir = temp_dir("defects-scoreboard");
    for (i, c) in cases().iter().enumerate() {
        let [first, last, none] = [Probe::First, Probe::Last, Probe::Unrelated].map(|p| {
            let tag = format!("k{i}_{}", p as u8);
            cycles_of(&dir, &tag, &scoreboard_kernel(c, p), c.threads)
        });
        assert_eq!(
            last, first,
            "{}: a dependence on {} costs {last} cycles, on {} {first}",
            c.name, c.last, c.first
        );
        assert!(
            first > none,
            "{}: the dependence on {} ({first} cycles) costs nothing over none ({none})",
            c.name,
            c.first
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The registers named in an instruction's PTX text (`%name` tokens that are registers of
/// the function), found independently of `deps_of`. Names, not ids: registers of nested
/// scopes may share a name.
fn named_registers(f: &gpusim_isa::Function, text: &str) -> BTreeSet<String> {
    // Every identifier that is not a modifier (`.b64`) and names a register: `%r1`, and the
    // names without `%` that inline assembly declares (`.reg .pred P1;`).
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let chars: Vec<char> = text.chars().collect();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        if !(is_name(chars[i]) || chars[i] == '%') {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < chars.len() && is_name(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let modifier = start > 0 && chars[start - 1] == '.';
        // `_` is the sink operand, no register.
        if !modifier && word != "_" && f.regs.iter().any(|r| r.name == word) {
            out.insert(word);
        }
    }
    out
}

/// Every `.ptx` file under `dir`, recursively.
fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

/// `deps_of` lists every register an instruction names (its PTX text; the sink `_` holds
/// nothing to wait for), except the accumulators of `wgmma.mma_async`, whose ready time `wgmma_state` sets at completion: over
/// every kernel in `traces/` and the scoreboard cases above.
#[test]
fn deps_of_lists_every_register_an_instruction_names() {
    let mut sources: Vec<(String, String)> = cases()
        .iter()
        .map(|c| (c.name.to_string(), scoreboard_kernel(c, Probe::Last)))
        .collect();
    let mut files = Vec::new();
    ptx_files(&root().join("traces"), &mut files);
    files.sort();
    for p in files {
        sources.push((
            p.display().to_string(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    let (mut checked, mut widest) = (0usize, 0usize);
    for (name, src) in &sources {
        // Some traces are deliberately malformed; they have nothing to schedule.
        let Ok(m) = gpusim_isa::parse_module(name, src) else {
            continue;
        };
        for f in &m.functions {
            for inst in &f.body {
                let text = gpusim_isa::print::inst_to_ptx(&m, f, inst);
                let mut scored = if let gpusim_isa::Op::Wgmma(_) = &inst.op {
                    named_registers(f, &text[text.find('}').expect("accumulators")..])
                } else {
                    named_registers(f, &text)
                };
                // The carry flag is named by the `.cc` modifiers and `addc`/`subc`/`madc`.
                if let gpusim_isa::Op::Carry {
                    cc, cc_in, cc_out, ..
                } = &inst.op
                {
                    if *cc_in || *cc_out {
                        scored.insert(f.regs[cc.0 as usize].name.clone());
                    }
                }
                let d = deps_of(inst);
                let listed: BTreeSet<String> = d
                    .reads
                    .iter()
                    .chain(&d.writes)
                    .map(|&r| f.regs[r as usize].name.clone())
                    .filter(|n| n != "_")
                    .collect();
                assert_eq!(listed, scored, "{name}: `{text}`");
                widest = widest.max(d.reads.len() + d.writes.len());
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} instructions checked");
    assert!(
        widest >= 32,
        "the widest instruction names {widest} registers"
    );
}

// ---------------------------------------------------------------------------------------------
// Item 8: fault reports that say what happened.

/// Write `ptx` and a one-launch manifest for its entry `k` (one `out` buffer of 64 u32, the
/// manifest's extra lines appended) into `dir`; returns the manifest.
fn kernel_case(dir: &Path, tag: &str, ptx: &str, block: u32, extra: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{tag}.ptx")), ptx).unwrap();
    let m = dir.join(format!("{tag}.yaml"));
    std::fs::write(
        &m,
        format!(
            "kernel: {tag}.ptx\nlaunches:\n  - entry: k\n    grid: [1, 1, 1]\n    block: [{block}, 1, 1]\n    args: [out]\nbuffers:\n  out: {{ dtype: u32, shape: [64], init: zeros }}\n{extra}"
        ),
    )
    .unwrap();
    m
}

/// A kernel `k(out)` with `body` after the usual prologue (`%rd1` = out, `%r0` = tid.x).
fn ptx_kernel(decls: &str, body: &str) -> String {
    format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n    .reg .b32 %r<8>;\n    .reg .b64 %rd<4>;\n    .reg .pred %p<4>;\n{decls}\n    ld.param.u64 %rd0, [out];\n    cvta.to.global.u64 %rd1, %rd0;\n    mov.u32 %r0, %tid.x;\n{body}\n    ret;\n}}\n"
    )
}

/// Issue 11 item 8: a 4 GiB `.shared` declaration wrapped to 0 bytes and faulted as an
/// out-of-bounds store at 0x0. Now it is bad input (exit 2) naming the variable, its line
/// and the limit.
#[test]
fn a_shared_declaration_beyond_the_sm_is_a_launch_error_naming_it() {
    let dir = temp_dir("defects-shared-size");
    let body = "    mov.u32 %r1, big;\n    st.shared.u32 [%r1], %r0;";
    let m = kernel_case(
        &dir,
        "big",
        &ptx_kernel("    .shared .align 4 .b32 big[1073741824];", body),
        32,
        "",
    );
    let e = match gpusim::run_manifest(&m, None, &[]) {
        Err(e) => e,
        Ok(_) => panic!("a 4 GiB shared array ran"),
    };
    assert_eq!(e.exit_code(), 2, "{e}");
    let text = e.to_string();
    for want in [
        "big.ptx:9:",
        "`big`",
        "4294967296 bytes",
        "49152",
        "sm.shared_bytes",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // One byte over the tiny GPU's 48 KiB is refused the same way; exactly 48 KiB runs.
    let over = kernel_case(
        &dir,
        "over",
        &ptx_kernel("    .shared .b8 big[49153];", body),
        32,
        "",
    );
    let e = gpusim::run_manifest(&over, None, &[])
        .err()
        .expect("refused");
    assert!(e.to_string().contains("49153 bytes"), "{e}");
    let fits = kernel_case(
        &dir,
        "fits",
        &ptx_kernel("    .shared .b8 big[49152];", body),
        32,
        "",
    );
    gpusim::run_manifest(&fits, None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The fault of a manifest run that must fault.
fn fault_of(m: &Path, sets: &[(String, String)]) -> gpusim::core::Fault {
    match gpusim::run_manifest(m, None, sets) {
        Err(gpusim::RunError::Fault(f)) => f,
        Err(e) => panic!("expected a fault, got {e}"),
        Ok(_) => panic!("expected a fault, the kernel completed"),
    }
}

/// Issue 11 item 8: a converged warp with an empty stack looping without changing anything
/// was reported with the token stack's text ("diverged lanes wait on the token stack").
#[test]
fn a_converged_infinite_loop_is_reported_as_one() {
    let dir = temp_dir("defects-infinite-loop");
    let body = "L:\n    add.u32 %r2, %r0, 1;\n    bra.uni L;";
    let m = kernel_case(&dir, "inf", &ptx_kernel("", body), 64, "");
    let f = fault_of(&m, &[]);
    assert_eq!(f.kind.name(), "liveness", "{f}");
    assert!(f.message.contains("an infinite loop"), "{f}");
    assert!(f.message.contains("2 warps spin"), "{f}");
    assert!(!f.message.contains("diverged"), "{f}");
    // The token-stack spin-lock keeps its own explanation.
    let spin = root().join("traces/faults/spinlock_two_warps/spinlock_two_warps.yaml");
    let out = gpusim::run_manifest(&spin, None, &[]).unwrap();
    let f = out.expected_fault.expect("a liveness fault");
    assert!(f.message.contains("diverged lanes wait"), "{f}");
    assert!(!f.message.contains("infinite loop"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11 item 8: two warps stuck at `atom.shared` behind a `lock; lock` memory program
/// were reported as "each waits on a barrier that cannot complete". The second `lock` waits
/// for the operation itself: a memory-program fault naming the program and the `lock`.
#[test]
fn a_memory_program_that_locks_twice_is_named_not_a_barrier() {
    let dir = temp_dir("defects-lock-lock");
    let body =
        "    mov.u32 %r1, cnt;\n    atom.shared.add.u32 %r2, [%r1], 1;\n    add.u32 %r3, %r2, 1;";
    let m = kernel_case(
        &dir,
        "lock",
        &ptx_kernel("    .shared .align 4 .b32 cnt;", body),
        64,
        "",
    );
    let program = "lock; lock; readMem; yield; atomOp; yield; writeMem; yield; unlock; yield; writeToRegs; yield; releaseRegs; end;";
    let f = fault_of(
        &m,
        &[("memory_programs.atom_shared".into(), program.into())],
    );
    assert_eq!(f.kind.name(), "memory-program", "{f}");
    for want in [
        "memory_programs.atom_shared",
        "`lock`",
        "wait for itself",
        "atom.shared.add.u32",
    ] {
        assert!(f.message.contains(want), "{want}: {f}");
    }
    assert!(!f.to_string().contains("barrier"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11 item 8: a watchdog report listed finished warps and could be a single 25 MB line
/// (a call stack of 492k entries). Finished warps are counted, not listed; a deep stack keeps
/// its ends and counts the rest; the report stays small.
#[test]
fn a_watchdog_report_omits_finished_warps_and_summarises_deep_stacks() {
    let dir = temp_dir("defects-watchdog-report");
    let ptx = ".version 7.0\n.target sm_52\n.address_size 64\n.func f()\n{\n    call f, ();\n    ret;\n}\n.visible .entry k(.param .u64 out)\n{\n    .reg .b32 %r<2>;\n    .reg .pred %p<2>;\n    mov.u32 %r0, %tid.x;\n    setp.lt.u32 %p1, %r0, 64;\n    @%p1 bra DONE;\n    call f, ();\nDONE:\n    ret;\n}\n";
    let m = kernel_case(&dir, "rec", ptx, 128, "set:\n  watchdog_cycles: 200000\n");
    let f = fault_of(&m, &[]);
    assert_eq!(f.kind.name(), "watchdog", "{f}");
    let text = f.to_string();
    assert!(text.len() < 8_000, "{} bytes", text.len());
    assert_eq!(f.details.len(), 3, "{text}");
    assert!(
        f.details[..2].iter().all(|d| d.contains(" in `f`")),
        "{text}"
    );
    assert!(f.details[..2].iter().all(|d| d.len() < 1_000), "{text}");
    assert!(
        f.details[0].contains("entries") && f.details[0].contains("not shown"),
        "{text}"
    );
    assert_eq!(
        f.details[2],
        "(2 finished warp(s) of resident CTAs not listed)"
    );
    assert!(!text.contains("completed"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11 item 8: a deadlock's headline says what the warps wait for, and the finished
/// warps of the CTA are counted instead of listed.
#[test]
fn a_deadlock_report_names_what_its_warps_wait_for() {
    let m = root().join("traces/faults/deadlock_bar_count/deadlock_bar_count.yaml");
    let out = gpusim::run_manifest(&m, None, &[]).unwrap();
    let f = out.expected_fault.expect("a deadlock");
    assert!(
        f.message
            .contains("2 warps wait at CTA barriers that cannot complete"),
        "{f}"
    );
    assert_eq!(f.details.len(), 3, "{f}");
    assert!(
        f.details[..2]
            .iter()
            .all(|d| d.contains("waiting at bar.sync 1")),
        "{f}"
    );
    assert_eq!(
        f.details[2],
        "(2 finished warp(s) of resident CTAs not listed)"
    );
}

// ---------------------------------------------------------------------------------------------
// Items 10 and 18: the warp trace streams to its file; outputs are written up to a fault.

/// `gpusim ARGS` from the repository root: (exit code, stdout, stderr).
fn gpusim_cli(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run gpusim");
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 11 item 10: `--trace-warps` held the whole trace in memory (5 GB after 20 s of an
/// infinite loop). It streams now, SM by SM each cycle; the file holds the same lines, in the
/// order the whole trace used to be sorted in: (launch, cycle, SM), each SM's in issue order.
#[test]
fn the_warp_trace_streams_in_cycle_and_sm_order() {
    let dir = temp_dir("defects-trace-stream");
    let m = root().join("traces/kernels/reduce_shared/reduce_shared.yaml");
    let file = dir.join("trace.txt");
    let (code, _, err) = gpusim_cli(&[
        "run".as_ref(),
        m.as_os_str(),
        "--trace-warps".as_ref(),
        file.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    let opts = gpusim::RunOptions {
        trace_warps: true,
        ..Default::default()
    };
    let out = gpusim::run_manifest_with(&m, None, &[], &opts).unwrap();
    let lines: Vec<String> = out.events.iter().map(|e| e.to_string()).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), lines);
    let keys: Vec<(u32, u64, u32)> = out
        .events
        .iter()
        .map(|e| (e.launch, e.cycle, e.sm))
        .collect();
    assert!(
        keys.windows(2).all(|k| k[0] <= k[1]),
        "not in (launch, cycle, SM) order"
    );
    assert!(
        keys.iter().any(|k| k.2 == 1) && keys.iter().any(|k| k.0 == 1),
        "two SMs, two launches"
    );
    assert_eq!(lines.len() as u64, out.stats.totals.warp_instructions);
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11 item 10: a trace that cannot be written is exit 2 naming the path.
#[cfg(target_os = "linux")]
#[test]
fn a_trace_write_error_is_exit_2_with_the_path() {
    let m = root().join("traces/kernels/vecadd/vecadd.yaml");
    let (code, _, err) = gpusim_cli(&[
        "run".as_ref(),
        m.as_os_str(),
        "--trace-warps".as_ref(),
        "/dev/full".as_ref(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot write the warp trace /dev/full"),
        "{err}"
    );
}

/// Issue 11 item 18: when a kernel faulted, `--stats-json`, `--trace-warps` and `--dump` were
/// not written. Each is written up to the fault — the stats of the cycles that ran (with the
/// fault's kind), the trace so far, the buffers as the fault left them — and the exit code
/// stays 3.
#[test]
fn a_faulting_run_writes_every_output_up_to_the_fault() {
    let dir = temp_dir("defects-fault-outputs");
    // Every thread stores 7 at out[tid], then thread 40 loads from below the buffer.
    let body = "    mul.wide.u32 %rd2, %r0, 4;\n    add.s64 %rd3, %rd1, %rd2;\n    mov.u32 %r1, 7;\n    st.global.u32 [%rd3], %r1;\n    bar.sync 0;\n    setp.eq.u32 %p1, %r0, 40;\n    @%p1 ld.global.u32 %r2, [%rd1+-64];";
    let m = kernel_case(&dir, "oob", &ptx_kernel("", body), 64, "");
    let (stats, trace, dump) = (dir.join("s.json"), dir.join("t.txt"), dir.join("dump"));
    let (code, stdout, err) = gpusim_cli(&[
        "run".as_ref(),
        m.as_os_str(),
        "--stats-json".as_ref(),
        stats.as_os_str(),
        "--trace-warps".as_ref(),
        trace.as_os_str(),
        "--dump".as_ref(),
        dump.as_os_str(),
    ]);
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(err.contains("kernel fault (out-of-bounds)"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let cycles = doc["cycles"].as_u64().unwrap();
    let insts = doc["warp_instructions"].as_u64().unwrap();
    assert!(cycles > 10 && insts > 10, "{doc}");
    assert_eq!(doc["kernels"][0]["fault"], "out-of-bounds", "{doc}");
    assert!(
        stdout.contains(&format!("cycles              {cycles}")),
        "{stdout}"
    );
    assert!(!stdout.contains("passed"), "{stdout}");
    let lines = std::fs::read_to_string(&trace).unwrap().lines().count() as u64;
    assert_eq!(
        lines, insts,
        "one trace line per warp instruction that issued"
    );
    let out = gpusim::launch::npy::read(&dump.join("out.npy")).unwrap();
    let words: Vec<u32> = out
        .data
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, vec![7; 64], "the stores before the fault");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11 item 18: with `expect_fault` the summary printed zeros although the launch ran
/// 20,000 cycles: a faulted launch's cycles are counted.
#[test]
fn an_expected_fault_counts_the_cycles_that_ran() {
    let m = root().join("traces/faults/watchdog_memory_loop/watchdog_memory_loop.yaml");
    let out = gpusim::run_manifest(&m, None, &[]).unwrap();
    assert!(out.expected_fault.is_some());
    let t = &out.stats.totals;
    assert!(t.cycles > 20_000, "{} cycles", t.cycles);
    assert!(t.warp_instructions > 0);
    assert_eq!(out.stats.kernels.len(), 1);
    assert_eq!(out.stats.kernels[0].fault, Some("watchdog"));
}
