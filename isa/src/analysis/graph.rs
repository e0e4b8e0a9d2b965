//! The block graph that token insertion rewrites: blocks of instructions whose pc operands are
//! symbolic, a structured terminator per block, and where each new block goes in the layout.

use super::flow::ControlFlow;
use crate::ir::*;
use crate::span::Span;

pub(crate) type BlockId = usize;

/// A pc operand that layout resolves once every block has its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The first instruction of a block.
    Block(BlockId),
    /// The instruction right after the `sync` that opens a sync pad.
    AfterSync(BlockId),
    /// Two past the instruction itself: after the `call` that follows a `preRet`.
    AfterCall,
}

/// One instruction; `target` overrides its pc operand, `origin` is its pc in the input body.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub inst: Inst,
    pub target: Option<Target>,
    pub origin: Option<Pc>,
}

impl Item {
    pub fn original(inst: Inst, pc: Pc) -> Item {
        Item {
            inst,
            target: None,
            origin: Some(pc),
        }
    }

    pub fn synth(guard: Option<Guard>, op: Op, span: Span) -> Item {
        Item {
            inst: Inst { guard, op, span },
            target: None,
            origin: None,
        }
    }

    pub fn token(op: Op, target: Target, span: Span) -> Item {
        Item {
            inst: Inst {
                guard: None,
                op,
                span,
            },
            target: Some(target),
            origin: None,
        }
    }
}

/// The source of a branch instruction in the input (for spans and labels).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jump {
    pub span: Span,
    pub uni: bool,
    pub origin: Option<Pc>,
}

#[derive(Clone, Debug)]
pub(crate) enum Term {
    /// Continue at `target`; `bra` is the input's explicit `bra`, if there was one.
    Goto { target: BlockId, bra: Option<Jump> },
    /// `@guard bra taken`, else `fall`.
    Branch {
        guard: Guard,
        taken: BlockId,
        fall: BlockId,
        jump: Jump,
    },
    /// `[@guard] brx.idx index, targets`, else (guard false) `fall`.
    Switch {
        guard: Option<Guard>,
        index: Operand,
        targets: Vec<BlockId>,
        fall: Option<BlockId>,
        jump: Jump,
    },
    /// An unguarded `ret`, `exit`, `trap` or `brk`.
    Stop(Item),
    /// The body ends here without a terminator; layout emits `exit` (entry) or `ret` (func).
    FallOff,
}

impl Term {
    /// Every target slot, in order (taken before fall-through), with repeats.
    pub fn targets(&self) -> Vec<BlockId> {
        match self {
            Term::Goto { target, .. } => vec![*target],
            Term::Branch { taken, fall, .. } => vec![*taken, *fall],
            Term::Switch { targets, fall, .. } => targets.iter().copied().chain(*fall).collect(),
            Term::Stop(_) | Term::FallOff => vec![],
        }
    }

    /// Distinct targets in slot order.
    pub fn succs(&self) -> Vec<BlockId> {
        let mut out = Vec::new();
        for t in self.targets() {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    pub fn retarget(&mut self, from: BlockId, to: BlockId) {
        let swap = |b: &mut BlockId| {
            if *b == from {
                *b = to;
            }
        };
        match self {
            Term::Goto { target, .. } => swap(target),
            Term::Branch { taken, fall, .. } => {
                swap(taken);
                swap(fall);
            }
            Term::Switch { targets, fall, .. } => {
                targets.iter_mut().for_each(swap);
                fall.iter_mut().for_each(swap);
            }
            Term::Stop(_) | Term::FallOff => {}
        }
    }

    /// A branch that may split the warp: a conditional `bra` or a `brx.idx`, not `.uni`.
    pub fn divergent(&self) -> bool {
        match self {
            Term::Branch { jump, .. } | Term::Switch { jump, .. } => !jump.uni,
            _ => false,
        }
    }

    /// Whether `b` is the fall-through slot of a branch.
    pub fn falls_to(&self, b: BlockId) -> bool {
        match self {
            Term::Branch { fall, .. } => *fall == b,
            Term::Switch { fall, .. } => *fall == Some(b),
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Original,
    /// Where a body that runs off its end goes.
    End,
    Preheader(usize),
    Latch(usize),
    /// A loop's break target when it has several exit blocks (or its one exit block lies further
    /// out than the enclosing level).
    Dispatch(usize),
    BrkStub,
    SyncPad,
    /// Pushes the tokens an edge needs (`ssy` for reconvergence points further out).
    Trampoline,
}

/// Where a new block goes in the layout, relative to another block; smaller keys first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// An input block (or the end block), in input order.
    Root,
    Before(BlockId, (u32, u32, u32)),
    After(BlockId, (u32, u32, u32)),
}

#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub items: Vec<Item>,
    pub term: Term,
    pub kind: Kind,
    /// Innermost loop (index into the loop forest), `None` at function level.
    pub level: Option<usize>,
    pub reachable: bool,
    /// The span synthesised instructions of this block derive from.
    pub span: Span,
    pub anchor: Anchor,
    /// First pc of an input block.
    pub start: Option<Pc>,
}

impl Block {
    pub fn new(kind: Kind, level: Option<usize>, term: Term, span: Span, anchor: Anchor) -> Block {
        Block {
            items: Vec::new(),
            term,
            kind,
            level,
            reachable: true,
            span,
            anchor,
            start: None,
        }
    }

    /// The span of the block's terminator (its branch, or the instruction it ends with).
    pub fn term_span(&self) -> Span {
        match &self.term {
            Term::Branch { jump, .. }
            | Term::Switch { jump, .. }
            | Term::Goto {
                bra: Some(jump), ..
            } => jump.span,
            Term::Stop(item) => item.inst.span,
            _ => self.items.last().map_or(self.span, |i| i.inst.span),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub blocks: Vec<Block>,
    pub entry: BlockId,
}

impl Graph {
    /// One block per CFG block (same indices), plus an end block if the body can run off its end.
    pub fn from_function(f: &Function, flow: &ControlFlow) -> Graph {
        let cfg = &flow.cfg;
        let n_pc = f.body.len() as Pc;
        let end = cfg.blocks.len();
        let mut falls_off = false;
        let mut next = |pc: Pc| {
            if pc + 1 < n_pc {
                cfg.block_of(pc + 1)
            } else {
                falls_off = true;
                end
            }
        };
        let mut blocks = Vec::new();
        for (b, bb) in cfg.blocks.iter().enumerate() {
            let last = bb.last_pc();
            let mut items: Vec<Item> = (bb.start..last)
                .map(|pc| Item::original(f.body[pc as usize].clone(), pc))
                .collect();
            let inst = f.body[last as usize].clone();
            let term = terminator(&inst, last, cfg, &mut next, &mut items);
            let span = inst.span;
            let reachable = flow.dom.reachable(b);
            let mut blk = Block::new(Kind::Original, None, term, span, Anchor::Root);
            blk.items = items;
            blk.reachable = reachable;
            blk.start = Some(bb.start);
            blocks.push(blk);
        }
        if falls_off {
            let span = f.body.last().map_or(f.span, |i| i.span);
            let reachable = blocks
                .iter()
                .any(|b| b.reachable && b.term.targets().contains(&end));
            let mut blk = Block::new(Kind::End, None, Term::FallOff, span, Anchor::Root);
            blk.reachable = reachable;
            blocks.push(blk);
        }
        Graph { blocks, entry: 0 }
    }

    pub fn add(&mut self, block: Block) -> BlockId {
        self.blocks.push(block);
        self.blocks.len() - 1
    }
}

/// The structured terminator of a block ending with `inst` at `pc`; a non-branch instruction
/// is moved into `items` and the block continues at the next one.
fn terminator(
    inst: &Inst,
    pc: Pc,
    cfg: &super::cfg::Cfg,
    next: &mut impl FnMut(Pc) -> BlockId,
    items: &mut Vec<Item>,
) -> Term {
    let jump = |uni: bool| Jump {
        span: inst.span,
        uni,
        origin: Some(pc),
    };
    match (&inst.op, inst.guard) {
        (Op::Bra { target, uni }, None) => Term::Goto {
            target: cfg.block_of(*target),
            bra: Some(jump(*uni)),
        },
        (Op::Bra { target, uni }, Some(guard)) => Term::Branch {
            guard,
            taken: cfg.block_of(*target),
            fall: next(pc),
            jump: jump(*uni),
        },
        (
            Op::BrxIdx {
                index,
                targets,
                uni,
            },
            guard,
        ) => Term::Switch {
            guard,
            index: *index,
            targets: targets.iter().map(|&t| cfg.block_of(t)).collect(),
            fall: guard.map(|_| next(pc)),
            jump: jump(*uni),
        },
        _ if super::cfg::ends_path(inst) => Term::Stop(Item::original(inst.clone(), pc)),
        _ => {
            items.push(Item::original(inst.clone(), pc));
            Term::Goto {
                target: next(pc),
                bra: None,
            }
        }
    }
}
