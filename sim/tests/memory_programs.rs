//! The memory-program engine (Habermaier Ch. 4; digest §2): parser round trips and error
//! locations, every cache operation's results incl. Wait and ⊥, and the digest's T9 fixtures.

use gpusim::mem::program::engine::{Access, Reg};
use gpusim::mem::program::syntax::print;
use gpusim::mem::program::*;

fn env() -> MemEnv {
    MemEnv::new(EnvConfig {
        line_size: 8,
        l1_sets: 1,
        l1_ways: 2,
        l2_sets: 2,
        l2_ways: 2,
        num_sms: 2,
        shared_banks: 32,
    })
}

fn prog(t: &str) -> Vec<Stm> {
    library::program(t).unwrap()
}

fn device(mid: u64, addr: u64, space: DeviceSpace, v: Vec<u8>, reg: u32) -> Sigma {
    Sigma {
        mid,
        pid: 0,
        regs: vec![reg],
        df: Some(vec![RegSlice {
            reg,
            offset: 0,
            len: 4,
        }]),
        access: Access::Device {
            addr,
            size: 4,
            space,
            cached: true,
            v_io: v,
        },
        line: Vec::new(),
    }
}

fn finish(e: &mut MemEnv, op: &mut MemOp) -> usize {
    let mut n = 1;
    while e.micro_step(op).unwrap() == Ya::Yield {
        n += 1;
    }
    n
}

fn reg(e: &MemEnv, pid: usize, r: u32) -> Reg {
    e.regs[pid].get(&r).cloned().unwrap_or_default()
}

#[test]
fn library_parses_and_round_trips() {
    for (name, text) in library::ALL {
        let p = prog(text);
        assert!(matches!(p.last(), Some(Stm::End)), "{name} ends with end;");
        assert_eq!(parse(&print(&p)).unwrap(), p, "{name}");
    }
    let odd = "if ((true or false) and !(isCachedL2 and isCachedL1)) { ; } else { yield; } end;";
    let p = parse(odd).unwrap();
    assert_eq!(parse(&print(&p)).unwrap(), p);
}

#[test]
fn parse_errors_give_line_column_and_text() {
    let e = parse("readL1;\nif (isCachedL1 { end; }").unwrap_err();
    assert_eq!((e.line, e.col, e.found.as_str()), (2, 16, "{"));
    let e = parse("yield;\n  readL3;").unwrap_err();
    assert_eq!((e.line, e.col, e.found.as_str()), (2, 3, "readL3"));
    let e = parse("end").unwrap_err();
    assert_eq!((e.line, e.col, e.found.as_str()), (1, 4, "end of input"));
    let e = parse("end; }").unwrap_err();
    assert_eq!((e.line, e.col), (1, 6));
    assert!(e.to_string().starts_with("1:6:"));
}

#[test]
fn cache_operation_results() {
    let mut c = Cache::new(8, 1, 2);
    assert_eq!(
        Cache::new(8, 1, 0).reserve(0, None),
        Err(CacheError::NoLines)
    );
    assert_eq!(c.read(0, 1), Err(CacheError::NotCached(0)));
    assert_eq!(c.update(0, &[0; 8]), Err(CacheError::NotCached(0)));
    assert_eq!(c.classify(0, EvClass::First), Err(CacheError::NotCached(0)));
    assert_eq!(c.evict(0), Ok(Outcome::Done(())));
    assert_eq!(
        c.write(6, &[1, 2, 3, 4]),
        Err(CacheError::Span { addr: 6, size: 4 })
    );
    // reserve: clean, invalid, Normal, pinned; a second reserve is ⊥.
    assert_eq!(c.reserve(4, Some(1)), Ok(Outcome::Done(())));
    let l = c.line(0).unwrap().clone();
    assert_eq!(
        (l.addr, l.valid(), l.dirty(), l.pins.clone()),
        (Some(0), false, false, vec![1])
    );
    assert_eq!(c.reserve(0, Some(2)), Err(CacheError::AlreadyCached(0)));
    // read of an invalid line pins and returns None; update fills and keeps pins.
    assert_eq!(c.read(0, 2), Ok(None));
    assert_eq!(c.line(0).unwrap().pins, vec![1, 2]);
    c.update(0, &[9; 8]).unwrap();
    assert!(c.line(0).unwrap().valid() && !c.line(0).unwrap().dirty());
    assert_eq!(c.line(0).unwrap().pins, vec![1, 2]);
    assert_eq!(c.evict(0), Ok(Outcome::Wait), "pinned");
    assert_eq!(c.discard(0), Ok(Outcome::Wait), "pinned");
    assert_eq!(c.read(0, 1), Ok(Some(vec![9; 8])));
    assert_eq!(c.read(0, 2), Ok(Some(vec![9; 8])));
    assert!(c.line(0).unwrap().pins.is_empty());
    // write of the same data leaves the line clean; new data makes it dirty.
    assert_eq!(c.write(0, &[9, 9]), Ok(Outcome::Done(())));
    assert!(!c.line(0).unwrap().dirty());
    c.write(0, &[7]).unwrap();
    assert!(c.line(0).unwrap().dirty());
    assert_eq!(c.evict(0), Ok(Outcome::Wait), "dirty");
    assert_eq!(c.discard(0), Ok(Outcome::Done(())));
    assert!(c.line(0).is_none());
    // update on a valid line changes nothing (newer data wins).
    c.reserve(16, Some(3)).unwrap();
    c.write(16, &[5]).unwrap();
    c.update(16, &[1; 8]).unwrap();
    assert_eq!(c.line(16).unwrap().data, vec![5, 1, 1, 1, 1, 1, 1, 1]);
}

#[test]
fn dirty_and_pinned_lines_are_never_evicted() {
    let mut c = Cache::new(8, 1, 2);
    c.write(0, &[1]).unwrap();
    c.reserve(8, Some(1)).unwrap();
    assert_eq!(c.reserve(16, Some(2)), Ok(Outcome::Wait));
    assert_eq!(c.write(24, &[1]), Ok(Outcome::Wait));
    assert!(!c.evict_silent(0) && !c.evict_silent(8));
    assert!(!(0..2).any(|i| c.can_evict(i)));
    c.mark_clean(0);
    assert_eq!(c.reserve(16, Some(2)), Ok(Outcome::Done(())));
    assert!(c.line(0).is_none() && c.line(8).is_some());
}

#[test]
fn first_before_normal_then_least_recently_used() {
    let mut c = Cache::new(8, 1, 2);
    for a in [0, 8] {
        c.reserve(a, Some(1)).unwrap();
        c.update(a, &[0; 8]).unwrap();
        c.read(a, 1).unwrap();
    }
    c.read(0, 1).unwrap(); // line 8 is now least recently used
    c.reserve(16, None).unwrap();
    assert!(c.line(8).is_none() && c.line(0).is_some());
    // Line 16 (clean, Normal) is now least recently used, but a First line goes before it.
    c.classify(0, EvClass::First).unwrap();
    c.read(0, 1).unwrap();
    c.reserve(24, None).unwrap();
    assert!(c.line(0).is_none() && c.line(16).is_some());
}

#[test]
fn t9a_store_wb_leaves_dirty_normal_l2_line() {
    let mut e = env();
    let p = prog(library::ST_GLOBAL_WB);
    // A stale L1 copy exists; the store discards it.
    e.l1[0].reserve(0x100, None).unwrap();
    let mut op = e.issue(
        &p,
        device(1, 0x100, DeviceSpace::Global, vec![1, 2, 3, 4], 7),
        0,
    );
    assert!(reg(&e, 0, 7).blocked);
    assert_eq!(finish(&mut e, &mut op), 2);
    assert!(e.l1[0].line(0x100).is_none());
    let l = e.l2.line(0x100).unwrap();
    assert!(l.dirty() && l.class == EvClass::Normal);
    assert_eq!(e.read_dram(0x100, 4), vec![0; 4]);
    assert!(!reg(&e, 0, 7).blocked);
    e.settle(&mut FirstReady).unwrap();
    assert_eq!(e.read_dram(0x100, 4), vec![1, 2, 3, 4]);
    assert!(!e.l2.line(0x100).unwrap().dirty());
}

#[test]
fn t9b_load_ca_miss_hit_and_waiting_reader() {
    let mut e = env();
    e.write_dram(0x100, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let p = prog(library::LD_CA);
    let mut a = e.issue(&p, device(1, 0x104, DeviceSpace::Global, vec![], 5), 0);
    let mut b = e.issue(&p, device(2, 0x104, DeviceSpace::Global, vec![], 6), 0);
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // reserveL1
    let l1 = e.l1[0].line(0x100).unwrap();
    assert!(l1.pending && !l1.valid() && l1.pins == vec![1]);
    assert!(e.l2.line(0x100).is_none());
    // A second reader finds the reserved line, pins it and waits.
    assert_eq!(e.micro_step(&mut b), Ok(Ya::Yield));
    assert_eq!(e.l1[0].line(0x100).unwrap().pins, vec![1, 2]);
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // reserveL2
    assert!(e.l2.line(0x100).unwrap().pending);
    assert_eq!(e.micro_step(&mut b), Ok(Ya::Yield)); // retries readL1, still invalid
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // readMem
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // updateL2; readL2
    assert!(e.l2.line(0x100).unwrap().valid());
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // updateL1; readL1
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // writeToRegs
    assert_eq!(
        reg(&e, 0, 5),
        Reg {
            value: vec![5, 6, 7, 8],
            blocked: true
        }
    );
    assert_eq!(e.micro_step(&mut a), Ok(Ya::End)); // releaseRegs
    assert!(!reg(&e, 0, 5).blocked);
    assert_eq!(finish(&mut e, &mut b), 3);
    assert_eq!(
        reg(&e, 0, 6),
        Reg {
            value: vec![5, 6, 7, 8],
            blocked: false
        }
    );
    // Hit path: L1 only, L2 untouched.
    let l2_before = e.l2.lines().to_vec();
    let mut c = e.issue(&p, device(3, 0x100, DeviceSpace::Global, vec![], 7), 0);
    assert_eq!(finish(&mut e, &mut c), 3);
    assert_eq!(e.l2.lines(), &l2_before[..]);
    assert_eq!(reg(&e, 0, 7).value, vec![1, 2, 3, 4]);
    assert!(e.l1[0].line(0x100).unwrap().pins.is_empty());
}

#[test]
fn t9c_local_cg_store_leaves_dirty_first_l1_line() {
    let mut e = env();
    let p = prog(library::ST_LOCAL_CS);
    let mut op = e.issue(&p, device(1, 0x40, DeviceSpace::Local, vec![9; 4], 1), 0);
    assert_eq!(finish(&mut e, &mut op), 2);
    let l = e.l1[0].line(0x40).unwrap();
    assert!(l.dirty() && l.class == EvClass::First);
    assert!(e.l2.line(0x40).is_none());
    e.settle(&mut FirstReady).unwrap();
    assert_eq!(e.read_dram(0x40, 4), vec![9; 4]);
}

struct RoundRobin(usize);
impl Oracle for RoundRobin {
    fn pick_op(&mut self, ready: &[u64]) -> usize {
        self.0 += 1;
        self.0 % ready.len()
    }
    fn pick_silent(&mut self, _: &[Silent]) -> Option<usize> {
        None
    }
}

fn atomic(mid: u64, pid: usize, addr: u64, space: AtomicSpace, b: u32, reg: u32) -> Sigma {
    Sigma {
        mid,
        pid,
        regs: vec![reg],
        df: Some(vec![RegSlice {
            reg,
            offset: 0,
            len: 4,
        }]),
        access: Access::Atomic {
            addr,
            size: 4,
            space,
            aop: AtomFn::Add,
            v_out: vec![],
            v_in1: b.to_le_bytes().to_vec(),
            v_in2: vec![],
        },
        line: Vec::new(),
    }
}

#[test]
fn t9d_global_atomics_sum_with_distinct_prefix_olds() {
    let mut e = env();
    e.write_dram(0x200, &10u32.to_le_bytes());
    let p = prog(library::ATOM_GLOBAL);
    let incs = [1u32, 2, 3, 4];
    let mut ops: Vec<MemOp> = incs
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            e.issue(
                &p,
                atomic(k as u64 + 1, k % 2, 0x200, AtomicSpace::Global, b, k as u32),
                0,
            )
        })
        .collect();
    e.run(&mut ops, &mut RoundRobin(0), 1000).unwrap();
    assert!(ops.is_empty());
    let mut olds: Vec<(u32, u32)> = (0..4)
        .map(|k| {
            let v = reg(&e, k % 2, k as u32).value;
            (u32::from_le_bytes(v.try_into().unwrap()), incs[k])
        })
        .collect();
    olds.sort();
    let mut acc = 10;
    for (old, inc) in olds {
        assert_eq!(old, acc);
        acc += inc;
    }
    e.settle(&mut FirstReady).unwrap();
    assert_eq!(e.read_dram(0x200, 4), 20u32.to_le_bytes().to_vec());
}

#[test]
fn micro_steps_are_atomic_read_modify_write() {
    let mut e = env();
    e.write_dram(0x200, &10u32.to_le_bytes());
    let p = prog(library::ATOM_GLOBAL);
    let mut op = e.issue(&p, atomic(1, 0, 0x200, AtomicSpace::Global, 5, 1), 0);
    for _ in 0..4 {
        e.micro_step(&mut op).unwrap(); // evictL1, reserveL2, readMem, updateL2
    }
    assert!(
        e.enabled_silent().is_empty(),
        "clean and pinned: nothing may fire"
    );
    e.micro_step(&mut op).unwrap(); // readL2; atomOp; writeL2 in one step
    let l = e.l2.line(0x200).unwrap();
    assert!(l.dirty() && l.pins.is_empty());
    assert_eq!(&l.data[..4], &15u32.to_le_bytes());
    assert_eq!(e.enabled_silent(), vec![Silent::WbL2 { line: 0x200 }]);
}

#[test]
fn t9e_shared_atomic_loses_a_racing_plain_store() {
    let mut e = env();
    e.shared[0].bytes.insert(0x10, 1);
    let mut a = e.issue(
        &prog(library::ATOM_SHARED),
        atomic(1, 0, 0x10, AtomicSpace::Shared, 5, 1),
        0,
    );
    let st = Sigma {
        mid: 2,
        pid: 0,
        regs: vec![2],
        df: None,
        access: Access::Shared {
            addrs: vec![(0x10, 4)],
            v_io: vec![vec![100, 0, 0, 0]],
        },
        line: Vec::new(),
    };
    let mut b = e.issue(&prog(library::ST_SHARED), st, 0);
    assert_eq!(e.micro_step(&mut a), Ok(Ya::Yield)); // lock; readMem (old = 1)
    let mut other = e.issue(
        &prog(library::ATOM_SHARED),
        atomic(3, 0, 0x10, AtomicSpace::Shared, 1, 3),
        0,
    );
    assert_eq!(
        e.micro_step(&mut other),
        Ok(Ya::Yield),
        "the bank is locked"
    );
    assert_eq!(e.micro_step(&mut b), Ok(Ya::Yield)); // the plain store ignores the lock
    assert_eq!(e.shared[0].bytes[&0x10], 100);
    assert_eq!(finish(&mut e, &mut a), 5);
    assert_eq!(e.shared[0].bytes[&0x10], 6, "the store's update is lost");
    assert_eq!(reg(&e, 0, 1).value, vec![1, 0, 0, 0]);
    assert_eq!(finish(&mut e, &mut b), 1);
    assert_eq!(finish(&mut e, &mut other), 6);
    assert_eq!(e.shared[0].bytes[&0x10], 7);
}

#[test]
fn t9f_register_write_blocks_until_end() {
    let mut e = env();
    let s = Sigma {
        mid: 1,
        pid: 1,
        regs: vec![3],
        df: Some(vec![RegSlice {
            reg: 3,
            offset: 0,
            len: 2,
        }]),
        access: Access::Reg { value: vec![4, 2] },
        line: Vec::new(),
    };
    let mut op = e.issue(&prog(library::REG_WRITE), s, 0);
    assert!(reg(&e, 1, 3).blocked);
    assert_eq!(e.micro_step(&mut op), Ok(Ya::Yield));
    assert_eq!(
        reg(&e, 1, 3),
        Reg {
            value: vec![4, 2],
            blocked: true
        }
    );
    assert_eq!(e.micro_step(&mut op), Ok(Ya::End));
    assert!(!reg(&e, 1, 3).blocked);
}

#[test]
fn stuck_programs_are_errors() {
    let mut e = env();
    let mut op = e.issue(
        &prog("readL1; end;"),
        device(1, 0, DeviceSpace::Global, vec![], 1),
        0,
    );
    assert!(matches!(
        e.micro_step(&mut op),
        Err(MemError::Cache(CacheError::NotCached(0)))
    ));
    let mut s = device(2, 0, DeviceSpace::Const, vec![1; 4], 1);
    let mut op = e.issue(&prog("writeMem; end;"), s.clone(), 0);
    assert_eq!(e.micro_step(&mut op), Err(MemError::ConstWrite));
    let mut op = e.issue(&prog("yield;"), s.clone(), 0);
    assert_eq!(e.micro_step(&mut op), Ok(Ya::Yield));
    assert_eq!(e.micro_step(&mut op), Err(MemError::NoEnd));
    if let Access::Device { cached, .. } = &mut s.access {
        *cached = false;
    }
    let mut op = e.issue(&prog("if (isCachedL2) { ; } end;"), s.clone(), 0);
    assert!(matches!(e.micro_step(&mut op), Err(MemError::Undefined(_))));
    let mut op = e.issue(&prog(library::LD_CONST), s, 0);
    assert_eq!(finish(&mut e, &mut op), 3);
    let derived = [library::LD_CG, library::LD_CS, library::LD_LU];
    for (k, t) in derived.iter().enumerate() {
        let mut op = e.issue(
            &prog(t),
            device(
                10 + k as u64,
                0x300 + 8 * k as u64,
                DeviceSpace::Local,
                vec![],
                1,
            ),
            0,
        );
        finish(&mut e, &mut op);
    }
    assert_eq!(e.l2.line(0x308).unwrap().class, EvClass::First);
    assert!(e.l1[0].line(0x310).is_none(), ".lu discards its L1 line");
}
