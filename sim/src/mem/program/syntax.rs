//! Abstract syntax of memory programs (Habermaier §4.4; digest §2.4.1) and the printer, whose
//! output parses back to the same tree.

use std::fmt;

/// A cache level: L1 of the op's SM, or the shared L2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    L1,
    L2,
}

/// `BExp ::= true | false | !BExp | BExp and BExp | BExp or BExp | isCachedL1 | isCachedL2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BExp {
    True,
    False,
    Not(Box<BExp>),
    And(Box<BExp>, Box<BExp>),
    Or(Box<BExp>, Box<BExp>),
    IsCached(Level),
}

/// The operations `OpExp` of digest §2.4.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpExp {
    ReadMem,
    WriteMem,
    AtomOp,
    ReleaseRegs,
    WriteToRegs,
    Lock,
    Unlock,
    Read(Level),
    Write(Level),
    Reserve(Level),
    Update(Level),
    Evict(Level),
    Discard(Level),
    ClassifyFirst(Level),
    ClassifyNormal(Level),
}

/// `MemStm`; a sequence is a `Vec<Stm>`, and `if (b) { s }` has an empty else branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stm {
    Skip,
    Yield,
    End,
    If(BExp, Vec<Stm>, Vec<Stm>),
    Op(OpExp),
}

impl OpExp {
    /// Every operation with its keyword, in the digest's order (the parser's table).
    pub const ALL: [OpExp; 23] = [
        OpExp::ReadMem,
        OpExp::WriteMem,
        OpExp::AtomOp,
        OpExp::ReleaseRegs,
        OpExp::WriteToRegs,
        OpExp::Lock,
        OpExp::Unlock,
        OpExp::Read(Level::L1),
        OpExp::Read(Level::L2),
        OpExp::Write(Level::L1),
        OpExp::Write(Level::L2),
        OpExp::Reserve(Level::L1),
        OpExp::Reserve(Level::L2),
        OpExp::Update(Level::L1),
        OpExp::Update(Level::L2),
        OpExp::Evict(Level::L1),
        OpExp::Evict(Level::L2),
        OpExp::Discard(Level::L1),
        OpExp::Discard(Level::L2),
        OpExp::ClassifyFirst(Level::L1),
        OpExp::ClassifyFirst(Level::L2),
        OpExp::ClassifyNormal(Level::L1),
        OpExp::ClassifyNormal(Level::L2),
    ];

    pub fn keyword(self) -> String {
        let (stem, level) = self.keyword_parts();
        format!("{stem}{level}")
    }

    /// The keyword as its stem and its level's suffix (`readL1`: `read`, `L1`; empty for the
    /// operations without a level), so it can be matched without building it.
    fn keyword_parts(self) -> (&'static str, &'static str) {
        let lv = |l: Level| match l {
            Level::L1 => "L1",
            Level::L2 => "L2",
        };
        match self {
            OpExp::ReadMem => ("readMem", ""),
            OpExp::WriteMem => ("writeMem", ""),
            OpExp::AtomOp => ("atomOp", ""),
            OpExp::ReleaseRegs => ("releaseRegs", ""),
            OpExp::WriteToRegs => ("writeToRegs", ""),
            OpExp::Lock => ("lock", ""),
            OpExp::Unlock => ("unlock", ""),
            OpExp::Read(l) => ("read", lv(l)),
            OpExp::Write(l) => ("write", lv(l)),
            OpExp::Reserve(l) => ("reserve", lv(l)),
            OpExp::Update(l) => ("update", lv(l)),
            OpExp::Evict(l) => ("evict", lv(l)),
            OpExp::Discard(l) => ("discard", lv(l)),
            OpExp::ClassifyFirst(l) => ("classifyFirst", lv(l)),
            OpExp::ClassifyNormal(l) => ("classifyNormal", lv(l)),
        }
    }

    pub fn from_keyword(s: &str) -> Option<OpExp> {
        OpExp::ALL.into_iter().find(|op| {
            let (stem, level) = op.keyword_parts();
            s.strip_prefix(stem) == Some(level)
        })
    }
}

impl fmt::Display for BExp {
    /// Binary operators are printed fully parenthesised, so precedence never matters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BExp::True => write!(f, "true"),
            BExp::False => write!(f, "false"),
            BExp::Not(b) => write!(f, "!{b}"),
            BExp::And(a, b) => write!(f, "({a} and {b})"),
            BExp::Or(a, b) => write!(f, "({a} or {b})"),
            BExp::IsCached(Level::L1) => write!(f, "isCachedL1"),
            BExp::IsCached(Level::L2) => write!(f, "isCachedL2"),
        }
    }
}

/// Prints a program, one statement per line, blocks indented by two spaces.
pub fn print(prog: &[Stm]) -> String {
    let mut out = String::new();
    print_block(prog, 0, &mut out);
    out
}

fn print_block(prog: &[Stm], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for s in prog {
        match s {
            Stm::Skip => out.push_str(&format!("{pad};\n")),
            Stm::Yield => out.push_str(&format!("{pad}yield;\n")),
            Stm::End => out.push_str(&format!("{pad}end;\n")),
            Stm::Op(op) => out.push_str(&format!("{pad}{};\n", op.keyword())),
            Stm::If(b, t, e) => {
                out.push_str(&format!("{pad}if ({b}) {{\n"));
                print_block(t, depth + 1, out);
                if e.is_empty() {
                    out.push_str(&format!("{pad}}}\n"));
                } else {
                    out.push_str(&format!("{pad}}} else {{\n"));
                    print_block(e, depth + 1, out);
                    out.push_str(&format!("{pad}}}\n"));
                }
            }
        }
    }
}
