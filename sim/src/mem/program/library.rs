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
/// `st.cg` bypasses L1, so the caption or the mapping is probably wrong; the program attached
/// to each (space, cop) pair is meant to be configurable.
pub const ST_LOCAL_CG: &str = "writeL1; classifyFirstL1; yield;
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

/// Every shipped program by name.
pub const ALL: [(&str, &str); 12] = [
    ("st.global.wb", ST_GLOBAL_WB),
    ("ld.ca", LD_CA),
    ("st.local.cg", ST_LOCAL_CG),
    ("atom.global", ATOM_GLOBAL),
    ("atom.shared", ATOM_SHARED),
    ("reg.write", REG_WRITE),
    ("ld.shared", LD_SHARED),
    ("st.shared", ST_SHARED),
    ("ld.const", LD_CONST),
    ("ld.global.cg", LD_CG),
    ("ld.cs", LD_CS),
    ("ld.local.lu", LD_LU),
];

/// Parses a library program.
pub fn program(text: &str) -> Result<Vec<Stm>, ParseError> {
    parse(text)
}
