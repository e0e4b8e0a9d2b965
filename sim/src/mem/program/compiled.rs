//! A memory program flattened for the timed memory system: straight-line code with jumps, so
//! that an operation can stop at a `yield` and resume there later, at another component, with
//! nothing but a program counter (`mem::system`).
//!
//! The formal model's unit of atomicity is the macro step: the statements from one `yield` to
//! the next (Habermaier §4.4; digest §2.4). The timed system runs a macro step at the one place
//! whose state it acts on — this SM's L1, an L2 slice, or the memory behind them — so each step
//! is checked, when the config loads, to act at one place on every path through it
//! (`Compiled::new`). Steps that act nowhere in particular (`writeToRegs`, `releaseRegs`,
//! `atomOp`, conditions that are constant) run wherever the operation is.

use super::syntax::{BExp, Level, OpExp, Stm};

/// Where a macro step acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The L1 of the operation's SM.
    L1,
    /// The L2 slice holding the operation's line.
    L2,
    /// The memory behind the caches: DRAM for global and local data; the SM's own shared
    /// memory, constant bank or parameter space for those targets.
    Mem,
    /// No state of its own (registers, the operation's own data): wherever the op is.
    Anywhere,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::L1 => "L1",
            Place::L2 => "L2",
            Place::Mem => "memory",
            Place::Anywhere => "anywhere",
        }
    }
}

/// One instruction of the flat program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    Op(OpExp),
    /// Go to the target when the condition is false (an `if`'s else branch or its end).
    JumpUnless(BExp, u16),
    Jump(u16),
    Yield,
    End,
}

/// A program compiled for the timed system: its code and the place of every macro step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    code: Vec<Instr>,
    /// `step_place[pc]`: the place of the macro step starting at `pc` (meaningful at 0 and
    /// after each `Yield`).
    step_place: Vec<Place>,
}

/// The place an operation or condition acts at.
pub fn place_of_op(op: OpExp) -> Place {
    match op {
        OpExp::ReadMem | OpExp::WriteMem | OpExp::Lock | OpExp::Unlock => Place::Mem,
        OpExp::AtomOp | OpExp::ReleaseRegs | OpExp::WriteToRegs => Place::Anywhere,
        OpExp::Read(l)
        | OpExp::Write(l)
        | OpExp::Reserve(l)
        | OpExp::Update(l)
        | OpExp::Evict(l)
        | OpExp::Discard(l)
        | OpExp::ClassifyFirst(l)
        | OpExp::ClassifyNormal(l) => level_place(l),
    }
}

fn level_place(l: Level) -> Place {
    match l {
        Level::L1 => Place::L1,
        Level::L2 => Place::L2,
    }
}

fn cond_places(b: &BExp, out: &mut Vec<Place>) {
    match b {
        BExp::True | BExp::False => {}
        BExp::Not(x) => cond_places(x, out),
        BExp::And(x, y) | BExp::Or(x, y) => {
            cond_places(x, out);
            cond_places(y, out);
        }
        BExp::IsCached(l) => out.push(level_place(*l)),
    }
}

impl Compiled {
    /// Flatten `prog` and find each macro step's place; an error names the step that acts at
    /// two places (the timed system could not run it atomically).
    pub fn new(prog: &[Stm]) -> Result<Compiled, String> {
        let mut code = Vec::new();
        flatten(prog, &mut code)?;
        // A program that falls off its end is rejected by the config loader
        // (`ends_on_every_path`); the sentinel keeps every jump target in range.
        code.push(Instr::End);
        let mut c = Compiled {
            step_place: vec![Place::Anywhere; code.len()],
            code,
        };
        let starts: Vec<usize> = std::iter::once(0)
            .chain(
                c.code
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| **i == Instr::Yield)
                    .map(|(pc, _)| pc + 1),
            )
            .filter(|&pc| pc < c.code.len())
            .collect();
        for pc in starts {
            c.step_place[pc] = c.analyse_step(pc)?;
        }
        Ok(c)
    }

    pub fn code(&self) -> &[Instr] {
        &self.code
    }

    /// The place of the macro step starting at `pc`.
    pub fn place(&self, pc: u16) -> Place {
        self.step_place[pc as usize]
    }

    /// The places every path of the step at `start` touches, until `yield` or `end`: at most
    /// one besides `Anywhere`.
    fn analyse_step(&self, start: usize) -> Result<Place, String> {
        let mut places = Vec::new();
        let mut seen = vec![false; self.code.len()];
        let mut work = vec![start];
        while let Some(pc) = work.pop() {
            if pc >= self.code.len() || std::mem::replace(&mut seen[pc], true) {
                continue;
            }
            match &self.code[pc] {
                Instr::Op(op) => {
                    places.push(place_of_op(*op));
                    work.push(pc + 1);
                }
                Instr::JumpUnless(b, t) => {
                    cond_places(b, &mut places);
                    work.push(pc + 1);
                    work.push(*t as usize);
                }
                Instr::Jump(t) => work.push(*t as usize),
                Instr::Yield | Instr::End => {}
            }
        }
        places.retain(|p| *p != Place::Anywhere);
        places.sort_by_key(|p| *p as u8);
        places.dedup();
        match places[..] {
            [] => Ok(Place::Anywhere),
            [p] => Ok(p),
            _ => Err(format!(
                "the step `{}` acts at {}: the timed memory system runs a step (the statements between two `yield`s) at one place, atomically — put a `yield` between the parts",
                self.describe_step(start),
                places
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(" and ")
            )),
        }
    }

    /// The step at `start` as program text (for messages).
    fn describe_step(&self, start: usize) -> String {
        let mut words = Vec::new();
        for i in &self.code[start..] {
            match i {
                Instr::Op(op) => words.push(op.keyword()),
                Instr::JumpUnless(b, _) => words.push(format!("if ({b})")),
                Instr::Jump(_) => {}
                Instr::Yield => {
                    words.push("yield".into());
                    break;
                }
                Instr::End => {
                    words.push("end".into());
                    break;
                }
            }
        }
        words.join("; ")
    }
}

fn flatten(prog: &[Stm], code: &mut Vec<Instr>) -> Result<(), String> {
    for s in prog {
        match s {
            Stm::Skip => {}
            Stm::Yield => code.push(Instr::Yield),
            Stm::End => code.push(Instr::End),
            Stm::Op(op) => code.push(Instr::Op(*op)),
            Stm::If(b, then, els) => {
                let branch = code.len();
                code.push(Instr::JumpUnless(b.clone(), 0));
                flatten(then, code)?;
                let target = if els.is_empty() {
                    code.len()
                } else {
                    let skip = code.len();
                    code.push(Instr::Jump(0));
                    let else_start = code.len();
                    flatten(els, code)?;
                    let end = pc16(code.len())?;
                    code[skip] = Instr::Jump(end);
                    else_start
                };
                code[branch] = Instr::JumpUnless(b.clone(), pc16(target)?);
            }
        }
    }
    pc16(code.len()).map(|_| ())
}

fn pc16(pc: usize) -> Result<u16, String> {
    u16::try_from(pc).map_err(|_| "the program is longer than 65535 statements".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::program::{library, parse};

    fn compile(text: &str) -> Result<Compiled, String> {
        Compiled::new(&parse(text).expect("parses"))
    }

    /// Every library program compiles: each of its steps acts at one place.
    #[test]
    fn every_library_program_steps_at_one_place() {
        for (name, text) in library::ALL {
            compile(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// 4.2 `ld.global.ca`: the steps are L1 (reserve or read), L2, memory, L2, L1, then the
    /// register steps anywhere.
    #[test]
    fn ld_ca_places() {
        let c = compile(library::LD_CA).unwrap();
        let places: Vec<Place> = std::iter::once(0)
            .chain(
                c.code()
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| **i == Instr::Yield)
                    .map(|(pc, _)| pc + 1),
            )
            .map(|pc| c.place(pc as u16))
            .collect();
        assert_eq!(
            places,
            [
                Place::L1,
                Place::L2,
                Place::Mem,
                Place::L2,
                Place::L1,
                Place::Anywhere,
                Place::Anywhere
            ]
        );
    }

    #[test]
    fn a_step_at_two_places_is_refused_naming_it() {
        let e = compile("readL2; updateL1; yield; releaseRegs; end;").unwrap_err();
        assert!(e.contains("readL2; updateL1; yield"), "{e}");
        assert!(e.contains("L1 and L2"), "{e}");
        let e = compile("if (isCachedL2) { readL1; } yield; releaseRegs; end;").unwrap_err();
        assert!(e.contains("L1 and L2"), "{e}");
    }

    #[test]
    fn if_else_jumps() {
        let c = compile("if (isCachedL1) { readL1; } else { reserveL1; } yield; end;").unwrap();
        assert_eq!(
            c.code(),
            &[
                Instr::JumpUnless(BExp::IsCached(Level::L1), 3),
                Instr::Op(OpExp::Read(Level::L1)),
                Instr::Jump(4),
                Instr::Op(OpExp::Reserve(Level::L1)),
                Instr::Yield,
                Instr::End,
                Instr::End,
            ]
        );
    }
}
