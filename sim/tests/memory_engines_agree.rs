//! The two engines of the formal CUDA memory model's memory programs (Habermaier Ch. 4; digest
//! §2) agree: the FORMAL reference engine (`mem::program::engine`, micro steps over the formal
//! caches of `mem::program::cache`) and the TIMED engine the simulator runs
//! (`mem::hierarchy::run` over the data-carrying sectored caches of `mem::cache`).
//!
//! Every program of `library::ALL` that applies to device memory (global and local loads,
//! stores, atomics and reductions) runs alone, in both engines, from matching initial states:
//! (a) cold caches, (b) the line valid and clean in L1 and L2, (c) the line only in L2, clean,
//! (d) the line only in L2, dirty, holding a newer value than DRAM. Afterwards, for the
//! operation's line in L1 and in L2, both must agree on what the formal model defines: present
//! or not, the touched bytes valid, dirty or not, the eviction class, pinned or not (the op
//! has ended, so nothing may stay pinned); and on the value returned to the registers (loads,
//! atomics), the value in L2 and the value in DRAM. The shared, constant and parameter
//! programs touch no cache: they must run in both engines, leave the caches cold and cost the
//! configured latency. Timing checks pin the tiny config's costs on the programs that define
//! them (`ld.global.ca`, `st.global.wb`, `atom.global`, shared, constant, parameter).
//!
//! Why: the timed engine claims to run each program as "a valid schedule of the formal
//! macro-step system" (`mem/hierarchy/exec.rs`); this checks that claim state by state against
//! the reference engine, so a change to either engine that breaks the correspondence fails here.
//!
//! Normalisations, where the engines differ by design (each is also noted where it is applied):
//! - Geometry. The formal cache fills WHOLE lines (`readMem` fetches the aligned line) while
//!   the timed one fills only the sectors the operation needs: validity is compared on the
//!   bytes the operation touches, and every byte the timed engine holds valid must be present
//!   in the formal line with the same value (timed sectors ⊆ formal line).
//! - "Same data ⇒ unchanged". The paper's lines are one word, so a write either changes the
//!   word (dirty) or not (clean). The formal engine refines this per byte (only the bytes that
//!   changed become dirty), the timed one per write (all written bytes, if any changed): dirty
//!   is compared as the paper defines it, per touched word (any touched byte dirty) and per
//!   line (any byte dirty). Neither can observe a difference in values: an unchanged byte
//!   written back writes the value already there.
//! - Scheduling. The timed engine runs a program to its `end` at once; the formal engine is
//!   stepped by an oracle that picks the only op and NEVER fires a silent rule (`NoSilent`),
//!   so that neither engine writes anything back or evicts on its own: with one operation and
//!   nothing written back silently, that is exactly the timed engine's schedule.
//!   (`FirstReady` would write dirty lines back eagerly, which the timed engine only does for
//!   victims, `evictX`, fences and the end of a launch.)
//! - Pins. Formal: a line is pinned while it has pins or a pending reservation. Timed: while
//!   its `ready` is `u64::MAX` (reserved and not filled); a `ready` in the future is a fill in
//!   flight, which the formal model has already completed when the op's program ended.
//! - Local memory. The timed engine keeps local lines as tags only (values stay in the warp's
//!   arrays) under a private tag (`hierarchy::local_tag`); the formal one stores local values
//!   in its DRAM at the plain address. Local lines are compared on their state; values
//!   (registers, L2, DRAM) only for global memory.

use gpusim::config::Config;
use gpusim::mem::cache::{Cache as TCache, EvClass as TClass, Mask, Slot};
use gpusim::mem::hierarchy::{self, local_tag, AtomicArgs, Backend, Costs, Ctx, SmMemory, Target};
use gpusim::mem::hierarchy::{Done, Txn};
use gpusim::mem::program::engine::Access;
use gpusim::mem::program::Compiled;
use gpusim::mem::program::{
    library, AtomFn, AtomicSpace, Cache as FCache, DeviceSpace, EnvConfig, EvClass as FClass,
    MemEnv, Oracle, RegSlice, Sigma, Silent,
};
use gpusim::mem::GlobalMemory;
use gpusim::stats::MemCounters;
use gpusim_isa::{AtomOp, Type};

/// The cycle every timed operation starts at.
const START: u64 = 1000;
/// Offset of the accessed word inside its line, and its size.
const OFF: usize = 8;
const SIZE: usize = 4;
/// The register that receives a load's or atomic's value (formal engine).
const REG: u32 = 7;
/// The (interleaved) local address of the local line (timed: under `local_tag(0, ..)`).
const LOCAL_LINE: u64 = 0x4000;
/// The value a store writes (differs from the DRAM pattern and from `NEWER`).
const STORED: [u8; 4] = [0x5C, 0x5D, 0x5E, 0x5F];
/// The newer value that the dirty L2 line of scenario (d) holds.
const NEWER: [u8; 4] = [0xA1, 0xA2, 0xA3, 0xA4];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// (a) Nothing cached.
    Cold,
    /// (b) The line valid and clean in L1 and L2.
    L1AndL2,
    /// (c) The line valid and clean in L2 only.
    L2Only,
    /// (d) The line valid in L2 only, dirty at the accessed word with `NEWER`.
    L2Dirty,
}

const SCENARIOS: [Scenario; 4] = [
    Scenario::Cold,
    Scenario::L1AndL2,
    Scenario::L2Only,
    Scenario::L2Dirty,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    Global,
    Local,
}

/// A global atomic's function: `Add` of 5, or a `Cas` whose comparison fails (the write
/// stores the value already there: "same data ⇒ unchanged" must leave the line clean).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    Add,
    CasFails,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Atomic { aop: Atom, returns: bool },
}

/// The device-memory operation a library program name stands for, `None` for the shared,
/// constant and parameter programs.
fn device_kind(name: &str) -> Option<(Kind, Space)> {
    let space = if name.contains(".local") {
        Space::Local
    } else {
        Space::Global
    };
    if name.starts_with("ld.global") || name.starts_with("ld.local") {
        Some((Kind::Load, space))
    } else if name.starts_with("st.global") || name.starts_with("st.local") {
        Some((Kind::Store, space))
    } else if name == "atom.global" {
        Some((
            Kind::Atomic {
                aop: Atom::Add,
                returns: true,
            },
            space,
        ))
    } else if name == "red.global" {
        Some((
            Kind::Atomic {
                aop: Atom::Add,
                returns: false,
            },
            space,
        ))
    } else {
        None
    }
}

/// Every case to compare: each device program, and each atomic with both functions.
fn cases() -> Vec<(&'static str, &'static str, Kind, Space)> {
    let mut out = Vec::new();
    for (name, text) in library::ALL {
        let Some((kind, space)) = device_kind(name) else {
            continue;
        };
        out.push((name, text, kind, space));
        if let Kind::Atomic { returns, .. } = kind {
            let cas = Kind::Atomic {
                aop: Atom::CasFails,
                returns,
            };
            out.push((name, text, cas, space));
        }
    }
    out
}

/// The DRAM contents of each line of the test buffer, by offset (every byte distinct).
fn pattern(i: usize) -> u8 {
    (i * 7 + 1) as u8
}

fn touched() -> Mask {
    ((1 << SIZE) - 1) << OFF
}

/// What the formal model defines about one line after the op, in both engines' terms.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LineObs {
    /// Per touched byte: valid (formal: present).
    valid: Vec<bool>,
    /// Any touched byte dirty (the paper's one-word line, see the header).
    word_dirty: bool,
    /// Any byte of the line dirty.
    dirty: bool,
    first: bool,
    pinned: bool,
    /// The touched bytes' values where all are valid (global only).
    data: Option<Vec<u8>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Obs {
    l1: Option<LineObs>,
    l2: Option<LineObs>,
    /// The value written to the registers (empty for local memory: tags only), if any.
    regs: Option<Vec<u8>>,
    /// The accessed word in DRAM (global only).
    dram: Option<Vec<u8>>,
}

/// The oracle of the comparison: the only op is stepped and no silent rule ever fires.
struct NoSilent;

impl Oracle for NoSilent {
    fn pick_op(&mut self, _ready: &[u64]) -> usize {
        0
    }
    fn pick_silent(&mut self, _enabled: &[Silent]) -> Option<usize> {
        None
    }
}

// ---- the formal engine ----------------------------------------------------------------------

struct Formal {
    env: MemEnv,
    /// The accessed address.
    addr: u64,
    space: Space,
}

fn formal_env(cfg: &Config) -> MemEnv {
    MemEnv::new(formal_env_config(cfg))
}

fn formal_env_config(cfg: &Config) -> EnvConfig {
    let sets = |kib: u32, line: u32, ways: u32| (kib as usize * 1024) / (line * ways) as usize;
    EnvConfig {
        line_size: cfg.l1.line_bytes as usize,
        l1_sets: sets(cfg.l1.size_kib, cfg.l1.line_bytes, cfg.l1.ways),
        l1_ways: cfg.l1.ways as usize,
        // The formal model has one L2; the timed one splits it in slices (same capacity).
        l2_sets: sets(cfg.l2.size_kib, cfg.l2.line_bytes, cfg.l2.ways),
        l2_ways: cfg.l2.ways as usize,
        num_sms: 1,
        shared_banks: cfg.sm.shared_banks as usize,
    }
}

/// A valid, clean, Normal, unpinned line holding `data`.
fn formal_fill(c: &mut FCache, la: u64, data: &[u8]) {
    assert_eq!(
        c.reserve(la, None),
        Ok(gpusim::mem::program::Outcome::Done(()))
    );
    c.update(la, data).unwrap();
}

impl Formal {
    fn new(cfg: &Config, line: u64, space: Space, sc: Scenario) -> Formal {
        let mut env = formal_env(cfg);
        let n = cfg.l1.line_bytes as usize;
        let bytes: Vec<u8> = (0..n).map(pattern).collect();
        env.write_dram(line, &bytes);
        match sc {
            Scenario::Cold => {}
            Scenario::L1AndL2 => {
                formal_fill(&mut env.l1[0], line, &bytes);
                formal_fill(&mut env.l2, line, &bytes);
            }
            Scenario::L2Only => formal_fill(&mut env.l2, line, &bytes),
            Scenario::L2Dirty => {
                formal_fill(&mut env.l2, line, &bytes);
                let w = env.l2.write(line + OFF as u64, &NEWER).unwrap();
                assert_eq!(w, gpusim::mem::program::Outcome::Done(()));
            }
        }
        Formal {
            env,
            addr: line + OFF as u64,
            space,
        }
    }

    fn sigma(&self, kind: Kind) -> Sigma {
        let df = Some(vec![RegSlice {
            reg: REG,
            offset: 0,
            len: SIZE,
        }]);
        let space = match self.space {
            Space::Global => DeviceSpace::Global,
            Space::Local => DeviceSpace::Local,
        };
        let (df, access) = match kind {
            Kind::Load => (
                df,
                Access::Device {
                    addr: self.addr,
                    size: SIZE,
                    space,
                    cached: true,
                    v_io: Vec::new(),
                },
            ),
            Kind::Store => (
                None,
                Access::Device {
                    addr: self.addr,
                    size: SIZE,
                    space,
                    cached: true,
                    v_io: STORED.to_vec(),
                },
            ),
            Kind::Atomic { aop, returns } => {
                let (aop, b, c) = atom_args(aop);
                (
                    if returns { df } else { None },
                    Access::Atomic {
                        addr: self.addr,
                        size: SIZE,
                        space: AtomicSpace::Global,
                        aop: match aop {
                            AtomOp::Add => AtomFn::Add,
                            _ => AtomFn::Cas,
                        },
                        v_out: Vec::new(),
                        v_in1: (b as u32).to_le_bytes().to_vec(),
                        v_in2: (c as u32).to_le_bytes().to_vec(),
                    },
                )
            }
        };
        Sigma {
            mid: 1,
            pid: 0,
            regs: vec![REG],
            df,
            access,
            line: Vec::new(),
        }
    }

    /// Runs `text` to its end under `NoSilent`.
    fn run(&mut self, text: &str, kind: Kind) {
        let prog = library::program(text).unwrap();
        let op = self.env.issue(&prog, self.sigma(kind), 0);
        let mut ops = vec![op];
        let steps = self.env.run(&mut ops, &mut NoSilent, 1000).unwrap();
        assert!(
            ops.is_empty(),
            "the formal op did not end in {steps} micro steps"
        );
    }

    fn line_obs(&self, c: &FCache) -> Option<LineObs> {
        let l = c.line(self.addr)?;
        let t = OFF..OFF + SIZE;
        let valid: Vec<bool> = l.present[t.clone()].to_vec();
        let all = valid.iter().all(|&v| v);
        Some(LineObs {
            word_dirty: l.dirty_bytes[t.clone()].iter().any(|&d| d),
            dirty: l.dirty(),
            first: l.class == FClass::First,
            pinned: l.pinned() || l.pending,
            data: (all && self.space == Space::Global).then(|| l.data[t].to_vec()),
            valid,
        })
    }

    fn obs(&self) -> Obs {
        self.obs_of(REG)
    }

    /// The observation with register `reg` as the result (0: none).
    fn obs_of(&self, reg: u32) -> Obs {
        let reg = self.env.regs[0].get(&reg).cloned().unwrap_or_default();
        assert!(!reg.blocked, "releaseRegs unblocked the register");
        let regs = (!reg.value.is_empty()).then(|| match self.space {
            Space::Global => reg.value.clone(),
            Space::Local => Vec::new(),
        });
        Obs {
            l1: self.line_obs(&self.env.l1[0]),
            l2: self.line_obs(&self.env.l2),
            regs,
            dram: (self.space == Space::Global).then(|| self.env.read_dram(self.addr, SIZE)),
        }
    }

    /// Every line of every cache, for the "no pins left" check.
    fn any_pinned(&self) -> bool {
        self.env
            .l1
            .iter()
            .chain(std::iter::once(&self.env.l2))
            .flat_map(|c| c.lines())
            .any(|l| l.pinned() || l.pending)
    }
}

fn atom_args(a: Atom) -> (AtomOp, u64, u64) {
    match a {
        Atom::Add => (AtomOp::Add, 5, 0),
        // No word of the test ever holds 0xFFFF_FFFF.
        Atom::CasFails => (AtomOp::Cas, 0xFFFF_FFFF, 0x1234_5678),
    }
}

// ---- the timed engine -----------------------------------------------------------------------

struct Timed {
    cfg: Config,
    sm: SmMemory,
    back: Backend,
    global: GlobalMemory,
    counters: MemCounters,
    /// The aligned global line of the access (the formal engine's line address).
    line: u64,
    /// The line as the timed caches tag it (global: `line`; local: a private tag).
    tag: u64,
    space: Space,
}

/// A valid, clean, Normal, settled line holding `data`, dirty on `dirty`.
fn timed_fill(c: &mut TCache, tag: u64, data: &[u8], dirty: Mask) {
    let i = match c.slot_for(tag, 0) {
        Slot::Free(i) => i,
        s => panic!("a cold cache has a free way, got {s:?}"),
    };
    c.install(i, tag);
    let full = c.full();
    let l = c.line_mut(i);
    l.valid = full;
    l.dirty = dirty;
    l.ready = 0;
    c.data_mut(i).copy_from_slice(data);
}

impl Timed {
    fn new(cfg: &Config, space: Space, sc: Scenario) -> Timed {
        let n = cfg.l1.line_bytes as usize;
        let mut global = GlobalMemory::default();
        let buf: Vec<u8> = (0..4 * n).map(|k| pattern(k % n)).collect();
        let base = global.alloc("buf", &buf);
        let line = base + n as u64;
        let tag = match space {
            Space::Global => line,
            Space::Local => local_tag(0, LOCAL_LINE),
        };
        let mut t = Timed {
            cfg: cfg.clone(),
            sm: SmMemory::new(cfg),
            back: Backend::new(cfg),
            global,
            counters: MemCounters::default(),
            line,
            tag,
            space,
        };
        let mut bytes: Vec<u8> = t.global.bytes(line, n as u64).unwrap().to_vec();
        assert_eq!(bytes, (0..n).map(pattern).collect::<Vec<u8>>());
        let slice = t.back.slice_of(tag);
        match sc {
            Scenario::Cold => {}
            Scenario::L1AndL2 => {
                timed_fill(&mut t.sm.l1, tag, &bytes, 0);
                timed_fill(&mut t.back.slices[slice], tag, &bytes, 0);
            }
            Scenario::L2Only => timed_fill(&mut t.back.slices[slice], tag, &bytes, 0),
            Scenario::L2Dirty => {
                bytes[OFF..OFF + SIZE].copy_from_slice(&NEWER);
                timed_fill(&mut t.back.slices[slice], tag, &bytes, touched());
            }
        }
        t
    }

    fn txn(&self, kind: Kind) -> Txn {
        let target = match self.space {
            Space::Global => Target::Global,
            Space::Local => Target::Local,
        };
        let mut txn = Txn::new(target, self.tag, touched());
        match kind {
            Kind::Load => {}
            Kind::Store => txn.data[OFF..OFF + SIZE].copy_from_slice(&STORED),
            Kind::Atomic { aop, .. } => {
                let (op, b, c) = atom_args(aop);
                txn.atomic = Some(AtomicArgs {
                    offset: OFF,
                    size: SIZE as u32,
                    op,
                    ty: Type::U32,
                    b,
                    c,
                    old: 0,
                });
            }
        }
        txn
    }

    fn run_txn(&mut self, name: &str, txn: &mut Txn) -> Done {
        let mut ctx = Ctx {
            sm: 0,
            mem: &mut self.sm,
            back: Some(&mut self.back),
            global: Some(&mut self.global),
            costs: Costs::of(&self.cfg),
            counters: &mut self.counters,
        };
        let prog = Compiled::new(self.cfg.memory_program(name)).expect("compiles");
        hierarchy::run(&prog, txn, &mut ctx, START)
            .unwrap_or_else(|e| panic!("{name}: the timed engine is stuck: {e}"))
    }

    fn line_obs(&self, c: &TCache) -> Option<LineObs> {
        let i = c.find(self.tag)?;
        let l = c.line(i);
        let valid: Vec<bool> = (OFF..OFF + SIZE).map(|b| l.valid >> b & 1 == 1).collect();
        let all = valid.iter().all(|&v| v);
        Some(LineObs {
            word_dirty: l.dirty & touched() != 0,
            dirty: l.dirty != 0,
            first: l.class == TClass::First,
            pinned: l.ready == u64::MAX,
            data: (all && self.space == Space::Global).then(|| c.data(i)[OFF..OFF + SIZE].to_vec()),
            valid,
        })
    }

    fn l2(&self) -> &TCache {
        &self.back.slices[self.back.slice_of(self.tag)]
    }

    fn obs(&self, txn: Option<&Txn>, kind: Kind) -> Obs {
        let regs = txn.filter(|t| t.wrote_regs).map(|t| match self.space {
            Space::Local => Vec::new(),
            Space::Global => match kind {
                Kind::Atomic { .. } => {
                    let old = t.atomic.expect("an atomic").old as u32;
                    old.to_le_bytes()[..SIZE].to_vec()
                }
                _ => t.data[OFF..OFF + SIZE].to_vec(),
            },
        });
        Obs {
            l1: self.line_obs(&self.sm.l1),
            l2: self.line_obs(self.l2()),
            regs,
            dram: (self.space == Space::Global).then(|| {
                let a = self.line + OFF as u64;
                self.global.bytes(a, SIZE as u64).unwrap().to_vec()
            }),
        }
    }

    fn any_pinned(&self) -> bool {
        std::iter::once(&self.sm.l1)
            .chain(&self.back.slices)
            .any(|c| c.used().any(|i| c.line(i).ready == u64::MAX))
    }
}

/// Timed sectors ⊆ formal line: every byte the timed line holds valid is present in the
/// formal line, with the same value for global lines (header: geometry); and every byte the
/// formal line holds dirty is dirty in the timed line.
fn check_sectors_within_formal(
    what: &str,
    timed: &Timed,
    t: &TCache,
    formal: &Formal,
    f: &FCache,
) -> Result<(), String> {
    let Some(i) = t.find(timed.tag) else {
        return Ok(());
    };
    let Some(fl) = f.line(formal.addr) else {
        return Err(format!(
            "{what}: the timed line exists, the formal one does not"
        ));
    };
    let tl = t.line(i);
    for b in 0..t.line_bytes() as usize {
        // Dirty per byte (formal) ⊆ dirty per write (timed); header: "same data ⇒ unchanged".
        if fl.dirty_bytes[b] && tl.dirty >> b & 1 == 0 {
            return Err(format!(
                "{what}: byte {b} dirty in the formal line, clean in the timed one"
            ));
        }
        if tl.valid >> b & 1 == 0 {
            continue;
        }
        if !fl.present[b] {
            return Err(format!(
                "{what}: byte {b} valid in the timed line, absent in the formal one"
            ));
        }
        if timed.space == Space::Global && t.data(i)[b] != fl.data[b] {
            return Err(format!(
                "{what}: byte {b} is {:#x} in the timed line, {:#x} in the formal one",
                t.data(i)[b],
                fl.data[b]
            ));
        }
    }
    Ok(())
}

// ---- the comparison -------------------------------------------------------------------------

/// Runs every device program in scenario `sc` in both engines; returns the mismatches.
fn compare_scenario(sc: Scenario) -> Vec<String> {
    let cfg = Config::tiny();
    assert_eq!(cfg.l1.line_bytes, cfg.l2.line_bytes, "one line size");
    let mut errors = Vec::new();
    for (name, text, kind, space) in cases() {
        let what = format!("{name} ({kind:?}) in scenario {sc:?}");
        assert_eq!(
            cfg.memory_program(name),
            &library::program(text).unwrap(),
            "{name}: tiny runs the library program"
        );
        let mut timed = Timed::new(&cfg, space, sc);
        let mut formal = Formal::new(&cfg, timed.line, space, sc);
        // The harness builds the same initial state in both engines.
        let (f0, t0) = (formal.obs(), timed.obs(None, kind));
        assert_eq!(f0, t0, "{what}: initial states differ");

        formal.run(text, kind);
        let mut txn = timed.txn(kind);
        timed.run_txn(name, &mut txn);
        let (f, t) = (formal.obs(), timed.obs(Some(&txn), kind));
        if f != t {
            errors.push(format!("{what}:\n  formal {f:?}\n  timed  {t:?}"));
        }
        if formal.any_pinned() {
            errors.push(format!("{what}: the formal engine left a line pinned"));
        }
        if timed.any_pinned() {
            errors.push(format!(
                "{what}: the timed engine left a line reserved (ready = u64::MAX)"
            ));
        }
        for (lvl, t_c, f_c) in [
            ("L1", &timed.sm.l1, &formal.env.l1[0]),
            ("L2", timed.l2(), &formal.env.l2),
        ] {
            if let Err(e) =
                check_sectors_within_formal(&format!("{what} {lvl}"), &timed, t_c, &formal, f_c)
            {
                errors.push(e);
            }
        }
        // What each kind must have produced, beyond agreeing (so that an engine pair that
        // agrees on doing nothing still fails).
        let expect_regs = match kind {
            Kind::Load => true,
            Kind::Store => false,
            Kind::Atomic { returns, .. } => returns,
        };
        if t.regs.is_some() != expect_regs {
            errors.push(format!("{what}: registers written = {}", t.regs.is_some()));
        }
    }
    errors
}

fn assert_agree(sc: Scenario) {
    let errors = compare_scenario(sc);
    assert!(
        errors.is_empty(),
        "{} disagreement(s):\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn every_library_program_is_covered() {
    let non_device = [
        "atom.shared",
        "ld.shared",
        "st.shared",
        "ld.const",
        "ld.param",
    ];
    for (name, _) in library::ALL {
        assert!(
            device_kind(name).is_some() != non_device.contains(&name),
            "{name}: exactly one of the device comparison and the non-device timing check"
        );
    }
    assert_eq!(
        library::ALL
            .iter()
            .filter(|(n, _)| device_kind(n).is_some())
            .count(),
        22
    );
}

#[test]
fn engines_agree_with_cold_caches() {
    assert_agree(Scenario::Cold);
}

#[test]
fn engines_agree_with_line_valid_in_l1_and_l2() {
    assert_agree(Scenario::L1AndL2);
}

#[test]
fn engines_agree_with_line_only_in_l2() {
    assert_agree(Scenario::L2Only);
}

#[test]
fn engines_agree_with_dirty_newer_line_in_l2() {
    assert_agree(Scenario::L2Dirty);
}

/// The comparison sees what it should: spot checks of the agreed results against the values
/// the programs must produce, in every scenario.
#[test]
fn agreed_results_are_the_programs_meaning() {
    let cfg = Config::tiny();
    for sc in SCENARIOS {
        // What the word holds before the op: L2's newer value in (d), else DRAM's.
        let before: Vec<u8> = match sc {
            Scenario::L2Dirty => NEWER.to_vec(),
            _ => (OFF..OFF + SIZE).map(pattern).collect(),
        };
        let dram: Vec<u8> = (OFF..OFF + SIZE).map(pattern).collect();

        // ld.global.ca returns the current value and leaves a copy of it in L1.
        let mut t = Timed::new(&cfg, Space::Global, sc);
        let mut txn = t.txn(Kind::Load);
        t.run_txn("ld.global.ca", &mut txn);
        let o = t.obs(Some(&txn), Kind::Load);
        assert_eq!(o.regs.as_deref(), Some(&before[..]), "{sc:?}");
        assert_eq!(o.l1.unwrap().data.as_deref(), Some(&before[..]), "{sc:?}");

        // st.global.wb: L1 dropped, L2 dirty with the stored value, DRAM untouched.
        let mut t = Timed::new(&cfg, Space::Global, sc);
        let mut txn = t.txn(Kind::Store);
        t.run_txn("st.global.wb", &mut txn);
        let o = t.obs(Some(&txn), Kind::Store);
        assert!(o.l1.is_none(), "{sc:?}");
        let l2 = o.l2.unwrap();
        assert!(l2.word_dirty && !l2.first, "{sc:?}");
        assert_eq!(l2.data.as_deref(), Some(&STORED[..]), "{sc:?}");
        assert_eq!(o.dram.as_deref(), Some(&dram[..]), "{sc:?}");

        // st.global.wt also writes DRAM (and the L2 copy stays dirty: writeMem cleans nothing).
        let mut t = Timed::new(&cfg, Space::Global, sc);
        let mut txn = t.txn(Kind::Store);
        t.run_txn("st.global.wt", &mut txn);
        let o = t.obs(Some(&txn), Kind::Store);
        assert_eq!(o.dram.as_deref(), Some(&STORED[..]), "{sc:?}");
        assert!(o.l2.unwrap().word_dirty, "{sc:?}");

        // atom.global add: returns the old value, L2 holds old + 5 dirty; a failing CAS
        // leaves the word as it was, dirty only if it already was.
        let old = u32::from_le_bytes(before.clone().try_into().unwrap());
        for (aop, new, dirty) in [
            (Atom::Add, old.wrapping_add(5), true),
            (Atom::CasFails, old, sc == Scenario::L2Dirty),
        ] {
            let kind = Kind::Atomic { aop, returns: true };
            let mut t = Timed::new(&cfg, Space::Global, sc);
            let mut txn = t.txn(kind);
            t.run_txn("atom.global", &mut txn);
            let o = t.obs(Some(&txn), kind);
            assert_eq!(o.regs.as_deref(), Some(&before[..]), "{sc:?} {aop:?}");
            let l2 = o.l2.unwrap();
            assert_eq!(
                l2.data.as_deref(),
                Some(&new.to_le_bytes()[..]),
                "{sc:?} {aop:?}"
            );
            assert_eq!(l2.word_dirty, dirty, "{sc:?} {aop:?}");
            assert!(o.l1.is_none(), "{sc:?} {aop:?}: evictL1");
            assert_eq!(o.dram.as_deref(), Some(&dram[..]), "{sc:?} {aop:?}");
        }
    }
}

// ---- timing ---------------------------------------------------------------------------------

/// Release cycle − start of `name` (`kind`, global) in scenario `sc` on `cfg`.
fn latency(cfg: &Config, name: &str, kind: Kind, sc: Scenario) -> (u64, MemCounters) {
    let mut t = Timed::new(cfg, Space::Global, sc);
    let mut txn = t.txn(kind);
    let done = t.run_txn(name, &mut txn);
    assert!(done.end >= done.release, "{name}: released after its end");
    (done.release - START, t.counters)
}

#[test]
fn ld_global_ca_costs_one_level_latency() {
    let cfg = Config::tiny();
    let (l1, l2, dram) = (
        cfg.l1.hit_latency as u64,
        cfg.l2.hit_latency as u64,
        cfg.dram.latency as u64,
    );
    // Cold: a DRAM access; the first one to an idle, precharged bank is a row Miss, whose
    // latency is exactly `dram.latency` (no row-buffer adjustment).
    let (cold, c) = latency(&cfg, "ld.global.ca", Kind::Load, Scenario::Cold);
    assert_eq!(
        (c.dram_row_misses, c.dram_row_hits, c.dram_row_conflicts),
        (1, 0, 0)
    );
    assert_eq!(cold, dram, "cold");
    for (sc, want) in [
        (Scenario::L2Only, l2),
        (Scenario::L2Dirty, l2),
        (Scenario::L1AndL2, l1),
    ] {
        let (got, c) = latency(&cfg, "ld.global.ca", Kind::Load, sc);
        assert_eq!(got, want, "{sc:?}");
        assert_eq!(c.dram_reads, 0, "{sc:?}: no DRAM access");
    }
}

#[test]
fn st_global_wb_costs_l2_latency() {
    let cfg = Config::tiny();
    for sc in SCENARIOS {
        let (got, c) = latency(&cfg, "st.global.wb", Kind::Store, sc);
        assert_eq!(got, cfg.l2.hit_latency as u64, "{sc:?}");
        assert_eq!(c.dram_bytes, 0, "{sc:?}: write-back, nothing reaches DRAM");
    }
}

#[test]
fn atom_global_costs_dram_cold_and_l2_on_a_hit() {
    let cfg = Config::tiny();
    for aop in [Atom::Add, Atom::CasFails] {
        let kind = Kind::Atomic { aop, returns: true };
        for sc in [Scenario::L2Only, Scenario::L2Dirty, Scenario::L1AndL2] {
            let (got, c) = latency(&cfg, "atom.global", kind, sc);
            assert_eq!(got, cfg.l2.hit_latency as u64, "{aop:?} {sc:?}");
            assert_eq!(c.dram_reads, 0, "{aop:?} {sc:?}: no DRAM access");
        }
    }
    // Cold: program 4.4 fills L2 from DRAM and then runs `readL2; atomOp; writeL2` at the
    // slice: steps that stay at L2 cross no port, so a lone atomic costs one DRAM trip.
    for aop in [Atom::Add, Atom::CasFails] {
        let kind = Kind::Atomic { aop, returns: true };
        let (cold, c) = latency(&cfg, "atom.global", kind, Scenario::Cold);
        assert_eq!(cold, cfg.dram.latency as u64, "{aop:?} cold");
        assert_eq!(
            (c.dram_row_misses, c.dram_row_hits, c.dram_row_conflicts),
            (1, 0, 0),
            "{aop:?}: one row Miss"
        );
    }
}

/// The shared, constant and parameter programs: no cache operation, so they run in both
/// engines without touching a cache; each costs its space's configured latency
/// (`atom.shared` too: program 4.5 reaches shared memory only).
#[test]
fn shared_const_param_programs_run_with_their_latency() {
    let cfg = Config::tiny();
    let lat = &cfg.latency;
    for (name, target, want) in [
        ("ld.shared", Target::Shared, lat.shared),
        ("st.shared", Target::Shared, lat.shared),
        ("atom.shared", Target::Shared, lat.shared),
        ("ld.const", Target::Const, lat.constant),
        ("ld.param", Target::Param, lat.param),
    ] {
        // Timed.
        let mut t = Timed::new(&cfg, Space::Global, Scenario::Cold);
        let mut txn = Txn::new(target, 0, 0);
        if name == "atom.shared" {
            txn.banks = 1;
            txn.atomic = Some(AtomicArgs {
                offset: 0,
                size: 4,
                op: AtomOp::Add,
                ty: Type::U32,
                b: 1,
                c: 0,
                old: 0,
            });
        }
        let done = t.run_txn(name, &mut txn);
        assert_eq!(done.release - START, want as u64, "{name}");
        assert_eq!(t.sm.l1.used().count(), 0, "{name}: L1 untouched");
        assert!(
            t.back.slices.iter().all(|s| s.used().count() == 0),
            "{name}: L2 untouched"
        );
        assert_eq!(
            txn.wrote_regs,
            name != "st.shared",
            "{name}: writeToRegs as the program says"
        );

        // Formal.
        let text = library::ALL.iter().find(|(n, _)| *n == name).unwrap().1;
        let mut env = formal_env(&cfg);
        env.write_dram(0x40, &[1, 2, 3, 4]);
        env.shared[0].bytes.insert(0x40, 9);
        let df = Some(vec![RegSlice {
            reg: REG,
            offset: 0,
            len: SIZE,
        }]);
        let (df, access) = match name {
            "ld.shared" => (
                df,
                Access::Shared {
                    addrs: vec![(0x40, SIZE)],
                    v_io: Vec::new(),
                },
            ),
            "st.shared" => (
                None,
                Access::Shared {
                    addrs: vec![(0x40, SIZE)],
                    v_io: vec![STORED.to_vec()],
                },
            ),
            "atom.shared" => (
                df,
                Access::Atomic {
                    addr: 0x40,
                    size: SIZE,
                    space: AtomicSpace::Shared,
                    aop: AtomFn::Add,
                    v_out: Vec::new(),
                    v_in1: 1u32.to_le_bytes().to_vec(),
                    v_in2: Vec::new(),
                },
            ),
            _ => (
                df,
                Access::Device {
                    addr: 0x40,
                    size: SIZE,
                    space: DeviceSpace::Const,
                    cached: false,
                    v_io: Vec::new(),
                },
            ),
        };
        let sigma = Sigma {
            mid: 1,
            pid: 0,
            regs: vec![REG],
            df,
            access,
            line: Vec::new(),
        };
        let op = env.issue(&library::program(text).unwrap(), sigma, 0);
        let mut ops = vec![op];
        env.run(&mut ops, &mut NoSilent, 1000).unwrap();
        assert!(ops.is_empty(), "{name}: the formal op ended");
        assert!(
            env.l1[0].lines().iter().all(|l| l.addr.is_none())
                && env.l2.lines().iter().all(|l| l.addr.is_none()),
            "{name}: formal caches untouched"
        );
        let reg = env.regs[0].get(&REG).cloned().unwrap_or_default();
        assert!(!reg.blocked, "{name}: registers released");
        let want_reg: &[u8] = match name {
            "ld.shared" | "atom.shared" => &[9, 0, 0, 0],
            "ld.const" | "ld.param" => &[1, 2, 3, 4],
            _ => &[],
        };
        assert_eq!(reg.value, want_reg, "{name}: formal register value");
        if name == "atom.shared" {
            assert_eq!(env.shared[0].bytes[&0x40], 10, "{name}: 9 + 1");
        }
    }
}

// ---- interleaved programs -------------------------------------------------------------------
//
// The timed system runs an operation's program one macro step at a time (`hierarchy::step`):
// at the place the step acts, stopping at each `yield`, or blocking at a micro step that must
// wait for another operation (a reservation not filled yet, a pinned line). Here several
// operations on ONE word, from two SMs, run interleaved macro step by macro step in a seeded
// random order; the formal engine replays the same schedule (the same op at every turn, no
// silent rule). Every turn must end the same way in both (an `end` in one is an `end` in the
// other), and the final states must agree as in the single-operation comparison: each op's
// register value, both L1s, the L2 and DRAM. So every interleaving the timed system can
// produce is one the formal engine produces, with the same result.

/// One operation of an interleaving.
#[derive(Clone, Copy, Debug)]
struct IOp {
    name: &'static str,
    kind: Kind,
    sm: usize,
    /// What a store writes (distinct per op, so the final value tells the order).
    value: [u8; 4],
}

/// The global device programs an interleaving draws from.
const POOL: [(&str, Kind); 9] = [
    ("ld.global.ca", Kind::Load),
    ("ld.global.cg", Kind::Load),
    ("ld.global.cs", Kind::Load),
    ("ld.global.cv", Kind::Load),
    ("st.global.wb", Kind::Store),
    ("st.global.cs", Kind::Store),
    ("st.global.wt", Kind::Store),
    (
        "atom.global",
        Kind::Atomic {
            aop: Atom::Add,
            returns: true,
        },
    ),
    (
        "red.global",
        Kind::Atomic {
            aop: Atom::Add,
            returns: false,
        },
    ),
];

fn draw(rng: &mut u64, n: usize) -> usize {
    (gpusim::rng::splitmix64(rng) % n as u64) as usize
}

/// `n` operations drawn from `POOL` on random SMs of two.
fn draw_ops(rng: &mut u64, n: usize) -> Vec<IOp> {
    (0..n)
        .map(|k| {
            let (name, kind) = POOL[draw(rng, POOL.len())];
            IOp {
                name,
                kind,
                sm: draw(rng, 2),
                value: [
                    0x30 + k as u8,
                    0x40 + k as u8,
                    0x50 + k as u8,
                    0x60 + k as u8,
                ],
            }
        })
        .collect()
}

/// Σ of op `k` (mid k + 1, register REG + k) at `addr`.
fn isigma(op: &IOp, k: usize, addr: u64) -> Sigma {
    let reg = REG + k as u32;
    let df = Some(vec![RegSlice {
        reg,
        offset: 0,
        len: SIZE,
    }]);
    let (df, access) = match op.kind {
        Kind::Load | Kind::Store => (
            (op.kind == Kind::Load).then_some(df).flatten(),
            Access::Device {
                addr,
                size: SIZE,
                space: DeviceSpace::Global,
                cached: true,
                v_io: if op.kind == Kind::Store {
                    op.value.to_vec()
                } else {
                    Vec::new()
                },
            },
        ),
        Kind::Atomic { aop, returns } => {
            let (_, b, c) = atom_args(aop);
            (
                if returns { df } else { None },
                Access::Atomic {
                    addr,
                    size: SIZE,
                    space: AtomicSpace::Global,
                    aop: AtomFn::Add,
                    v_out: Vec::new(),
                    v_in1: (b as u32).to_le_bytes().to_vec(),
                    v_in2: (c as u32).to_le_bytes().to_vec(),
                },
            )
        }
    };
    Sigma {
        mid: k as u64 + 1,
        pid: op.sm,
        regs: vec![reg],
        df,
        access,
        line: Vec::new(),
    }
}

/// The timed operation of `op` on the word at `OFF` of `line`.
fn itxn(op: &IOp, line: u64) -> Txn {
    let mut txn = Txn::new(Target::Global, line, touched());
    match op.kind {
        Kind::Load => {}
        Kind::Store => txn.data[OFF..OFF + SIZE].copy_from_slice(&op.value),
        Kind::Atomic { aop, .. } => {
            let (aop, b, c) = atom_args(aop);
            txn.atomic = Some(AtomicArgs {
                offset: OFF,
                size: SIZE as u32,
                op: aop,
                ty: Type::U32,
                b,
                c,
                old: 0,
            });
        }
    }
    txn
}

/// Runs `ops` interleaved in the order drawn from `seed` in both engines, from cold caches;
/// returns what differed (empty when they agree) and how many turns blocked in the timed
/// engine.
fn interleave(cfg: &Config, ops: &[IOp], seed: u64) -> (Vec<String>, usize) {
    // Timed: SM 0's memory is `timed.sm`, SM 1's is `sm1`.
    let mut timed = Timed::new(cfg, Space::Global, Scenario::Cold);
    let mut sm1 = SmMemory::new(cfg);
    let mut env = {
        let mut e = MemEnv::new(EnvConfig {
            num_sms: 2,
            ..formal_env_config(cfg)
        });
        let n = cfg.l1.line_bytes as usize;
        e.write_dram(timed.line, &(0..n).map(pattern).collect::<Vec<u8>>());
        e
    };
    let addr = timed.line + OFF as u64;
    let progs: Vec<Compiled> = ops
        .iter()
        .map(|o| Compiled::new(cfg.memory_program(o.name)).unwrap())
        .collect();
    let mut txns: Vec<Txn> = ops.iter().map(|o| itxn(o, timed.line)).collect();
    let mut states: Vec<hierarchy::OpState> =
        ops.iter().map(|_| hierarchy::OpState::new(START)).collect();
    let mut fops: Vec<_> = ops
        .iter()
        .enumerate()
        .map(|(k, o)| {
            let prog = library::program(library::ALL.iter().find(|(n, _)| *n == o.name).unwrap().1)
                .unwrap();
            env.issue(&prog, isigma(o, k, addr), 0)
        })
        .collect();
    let mut alive: Vec<usize> = (0..ops.len()).collect();
    let mut rng = seed;
    let (mut errors, mut blocked, mut turns) = (Vec::new(), 0, 0);
    let costs = Costs::of(cfg);
    while !alive.is_empty() {
        turns += 1;
        if turns > 10_000 {
            errors.push(format!("no progress after 10000 turns: alive {alive:?}"));
            break;
        }
        let j = draw(&mut rng, alive.len());
        let k = alive[j];
        let mem = if ops[k].sm == 0 {
            &mut timed.sm
        } else {
            &mut sm1
        };
        let mut ctx = Ctx {
            sm: ops[k].sm as u32,
            mem,
            back: Some(&mut timed.back),
            global: Some(&mut timed.global),
            costs,
            counters: &mut timed.counters,
        };
        let t = match hierarchy::step(&progs[k], &mut txns[k], &mut ctx, &mut states[k]) {
            Ok(t) => t,
            Err(e) => {
                errors.push(format!("op {k} ({}): timed ⊥: {e}", ops[k].name));
                break;
            }
        };
        if t == hierarchy::Stepped::Waiting {
            // The timed step did not start: to the formal engine, the op was not picked.
            blocked += 1;
            continue;
        }
        let f = match env.micro_step(&mut fops[k]) {
            Ok(f) => f,
            Err(e) => {
                errors.push(format!("op {k} ({}): formal ⊥: {e:?}", ops[k].name));
                break;
            }
        };
        let t_end = matches!(t, hierarchy::Stepped::Ended(_));
        if t_end != (f == gpusim::mem::program::Ya::End) {
            errors.push(format!(
                "op {k} ({}) at turn {turns}: timed {t:?}, formal {f:?}",
                ops[k].name
            ));
            break;
        }
        blocked += (t == hierarchy::Stepped::Blocked) as usize;
        if t_end {
            alive.remove(j);
        }
    }
    if !errors.is_empty() {
        return (errors, blocked);
    }
    // The final states.
    let formal = Formal {
        env,
        addr,
        space: Space::Global,
    };
    for (k, op) in ops.iter().enumerate() {
        let reg = formal.env.regs[op.sm]
            .get(&(REG + k as u32))
            .cloned()
            .unwrap_or_default();
        let f = (!reg.value.is_empty()).then(|| reg.value.clone());
        let t = timed.obs(Some(&txns[k]), op.kind).regs;
        if f != t {
            errors.push(format!(
                "op {k} ({}): registers formal {f:?}, timed {t:?}",
                op.name
            ));
        }
        if reg.blocked {
            errors.push(format!(
                "op {k} ({}): formal register still blocked",
                op.name
            ));
        }
    }
    let t_obs = timed.obs(None, Kind::Load);
    let f_obs = formal.obs_of(0);
    for (what, f, t) in [
        ("L1 of SM 0", &f_obs.l1, &t_obs.l1),
        ("L2", &f_obs.l2, &t_obs.l2),
    ] {
        if f != t {
            errors.push(format!("{what}: formal {f:?}, timed {t:?}"));
        }
    }
    let (f1, t1) = (formal.line_obs(&formal.env.l1[1]), timed.line_obs(&sm1.l1));
    if f1 != t1 {
        errors.push(format!("L1 of SM 1: formal {f1:?}, timed {t1:?}"));
    }
    if f_obs.dram != t_obs.dram {
        errors.push(format!(
            "DRAM: formal {:?}, timed {:?}",
            f_obs.dram, t_obs.dram
        ));
    }
    if formal.any_pinned()
        || timed.any_pinned()
        || sm1.l1.used().any(|i| sm1.l1.line(i).ready == u64::MAX)
    {
        errors.push("a line stayed pinned or reserved".into());
    }
    (errors, blocked)
}

/// Interleavings of two to four operations on one word, from two SMs: every one the timed
/// engine runs is one the formal engine runs, with the same result; and interleaving really
/// happens (some turns block on another operation's reservation).
#[test]
fn interleaved_programs_agree_with_the_formal_engine() {
    let cfg = Config::tiny();
    let mut rng = 0x1234_5678;
    let (mut failures, mut blocked) = (Vec::new(), 0);
    for case in 0..400 {
        let n = 2 + draw(&mut rng, 3);
        let ops = draw_ops(&mut rng, n);
        let seed = gpusim::rng::splitmix64(&mut rng);
        let (errors, b) = interleave(&cfg, &ops, seed);
        blocked += b;
        if !errors.is_empty() {
            failures.push(format!(
                "case {case} {ops:?} seed {seed:#x}:\n  {}",
                errors.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 400 interleavings disagree:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        blocked > 0,
        "no interleaving ever blocked: the test does not interleave"
    );
}
