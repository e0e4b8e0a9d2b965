//! The paper's memory programs (Habermaier §4.4–4.5, programs 4.1–4.6) and our derived defaults
//! (digest §2.5), kept as program TEXT so that configs can override them; `program` parses one.

use super::parse::{parse, ParseError};
use super::syntax::Stm;

/// 4.1 `st.global.wb`: global data never stays in L1; atomic if `writeL2` succeeds at once.
pub const ST_GLOBAL_WB: &str = "discardL1; yield;
writeL2; classifyNormalL2; releaseRegs; end;";

/// 4.2 `ld.{global,local}.ca`.
pub const LD_CA: &str = "if (!isCachedL1) {
  reserveL1; yield;
  if (!isCachedL2) {
    reserveL2; yield;
    readMem; yield;
    updateL2;
  }
  readL2; yield;
  updateL1;
}
readL1; yield;
writeToRegs; yield;
releaseRegs; end;";

/// 4.3 "local writes using .cg", as captioned. Digest ⚠: evict-first is PTX's `.cs`, and
/// `st.cg` bypasses L1, so the caption or the mapping is probably wrong: we ship this program
/// as `st.local.cs` and give `st.local.cg` the PTX meaning (`ST_LOCAL_CG`).
pub const ST_LOCAL_CS: &str = "writeL1; classifyFirstL1; yield;
releaseRegs; end;";

/// 4.4 `atom.global.*`: the read-modify-write is one micro step at L2.
pub const ATOM_GLOBAL: &str = "evictL1; yield;
if (!isCachedL2) {
  reserveL2; classifyNormalL2; yield;
  readMem; yield;
  updateL2; yield;
}
readL2; atomOp; writeL2; yield;
writeToRegs; yield;
releaseRegs; end;";

/// 4.5 `atom.shared.*`: atomic only against other atomics on the same banks.
pub const ATOM_SHARED: &str = "lock; readMem; yield;
atomOp; yield;
writeMem; yield;
unlock; yield;
writeToRegs; yield;
releaseRegs; end;";

/// 4.6 register writes (ALU, mov, setp, vote, bar.red results).
pub const REG_WRITE: &str = "writeToRegs; yield;
releaseRegs; end;";

/// Derived (ours, not the paper's): `ld.shared`.
pub const LD_SHARED: &str = "readMem; yield; writeToRegs; yield; releaseRegs; end;";
/// Derived (ours): `st.shared`.
pub const ST_SHARED: &str = "writeMem; yield; releaseRegs; end;";
/// Derived (ours): `ld.const` (uncached Σ_device).
pub const LD_CONST: &str = "readMem; yield; writeToRegs; yield; releaseRegs; end;";
/// Derived (ours): `ld.global.cg`, 4.2 without the L1 part.
pub const LD_CG: &str = "if (!isCachedL2) { reserveL2; yield; readMem; yield; updateL2; }
readL2; yield; writeToRegs; yield; releaseRegs; end;";
/// Derived (ours): `ld.*.cs`, 4.2 with evict-first classes after the fills.
pub const LD_CS: &str = "if (!isCachedL1) {
  reserveL1; yield;
  if (!isCachedL2) {
    reserveL2; yield;
    readMem; yield;
    updateL2; classifyFirstL2;
  }
  readL2; yield;
  updateL1; classifyFirstL1;
}
readL1; yield;
writeToRegs; yield;
releaseRegs; end;";
/// Derived (ours): `ld.local.lu`, 4.2 then discard the L1 line (last use, no write-back).
pub const LD_LU: &str = "if (!isCachedL1) {
  reserveL1; yield;
  if (!isCachedL2) {
    reserveL2; yield;
    readMem; yield;
    updateL2;
  }
  readL2; yield;
  updateL1;
}
readL1; yield;
writeToRegs; yield;
discardL1; yield;
releaseRegs; end;";

/// Derived (ours): `ld.*.cv` and volatile loads: drop this SM's L1 copy (written back first if
/// dirty: `evictL1` waits for the write-back), then read at L2, the point of coherence for all
/// SMs, as 4.2 without the L1 fill. PTX's "fetch again" is for system memory, which gpusim does
/// not model, so L2 is as far as it goes.
pub const LD_CV: &str = "evictL1; yield;
if (!isCachedL2) { reserveL2; yield; readMem; yield; updateL2; }
readL2; yield; writeToRegs; yield; releaseRegs; end;";

/// Derived (ours): `st.global.cs`, 4.1 with the L2 line marked evict-first (streaming).
pub const ST_GLOBAL_CS: &str = "discardL1; yield;
writeL2; classifyFirstL2; releaseRegs; end;";

/// Derived (ours): `st.*.wt`, write through to memory: 4.1, then the same bytes to DRAM.
pub const ST_GLOBAL_WT: &str = "discardL1; yield;
writeL2; classifyNormalL2; yield;
writeMem; yield;
releaseRegs; end;";

/// Derived (ours): `st.local.wb`: local data stays in this SM's L1, dirty (a thread's local
/// memory is private, so the incoherent L1 is safe for it); it reaches L2 by write-back.
pub const ST_LOCAL_WB: &str = "writeL1; yield;
releaseRegs; end;";

/// Derived (ours): `st.local.cg`, the PTX meaning of `.cg` (cache at L2, bypass L1). The
/// paper's 4.3, captioned `.cg`, marks the line evict-first, which is PTX's `.cs`: we ship it
/// as `st.local.cs` (digest §2.5 ⚠).
pub const ST_LOCAL_CG: &str = "discardL1; yield;
writeL2; classifyNormalL2; releaseRegs; end;";

/// Derived (ours): `red.global`, 4.4 without the register write (a reduction returns nothing).
pub const RED_GLOBAL: &str = "evictL1; yield;
if (!isCachedL2) {
  reserveL2; classifyNormalL2; yield;
  readMem; yield;
  updateL2; yield;
}
readL2; atomOp; writeL2; yield;
releaseRegs; end;";

/// Every program the timing model runs, by operation name: `ld`/`st` with space and cache
/// operator (`.volatile` accesses by their own names), global reductions and atomics, shared
/// atomics, loads and stores. Config keys are these names with `_` for `.`.
pub const ALL: [(&str, &str); 27] = [
    ("ld.global.ca", LD_CA),
    ("ld.global.cg", LD_CG),
    ("ld.global.cs", LD_CS),
    // PTX ISA: `ld.lu` on global addresses is `ld.cs`.
    ("ld.global.lu", LD_CS),
    ("ld.global.cv", LD_CV),
    ("ld.global.volatile", LD_CV),
    ("ld.local.ca", LD_CA),
    ("ld.local.cg", LD_CG),
    ("ld.local.cs", LD_CS),
    ("ld.local.lu", LD_LU),
    ("ld.local.cv", LD_CV),
    ("st.global.wb", ST_GLOBAL_WB),
    // `.cg` caches at L2 only, which is what 4.1 does.
    ("st.global.cg", ST_GLOBAL_WB),
    ("st.global.cs", ST_GLOBAL_CS),
    ("st.global.wt", ST_GLOBAL_WT),
    ("st.global.volatile", ST_GLOBAL_WB),
    ("st.local.wb", ST_LOCAL_WB),
    ("st.local.cg", ST_LOCAL_CG),
    ("st.local.cs", ST_LOCAL_CS),
    ("st.local.wt", ST_GLOBAL_WT),
    ("atom.global", ATOM_GLOBAL),
    ("red.global", RED_GLOBAL),
    ("atom.shared", ATOM_SHARED),
    ("ld.shared", LD_SHARED),
    ("st.shared", ST_SHARED),
    // The constant cache is not a formal cache (digest gap 6): one step at `latency.constant`
    // / `latency.param`.
    ("ld.const", LD_CONST),
    ("ld.param", LD_CONST),
];

/// Parses a library program.
pub fn program(text: &str) -> Result<Vec<Stm>, ParseError> {
    parse(text)
}
