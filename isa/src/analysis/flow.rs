//! The control-flow facts of one function: CFG, dominators, post-dominators and loop forest,
//! with irreducibility reported at the PTX line of the offending branch.

use super::cfg::Cfg;
use super::dom::DomTree;
use super::loops::LoopForest;
use super::AnalysisError;
use crate::ir::Function;

#[derive(Clone, Debug)]
pub struct ControlFlow {
    pub cfg: Cfg,
    /// Dominators of the blocks (the virtual exit is not part of this tree).
    pub dom: DomTree,
    /// Post-dominators over the blocks plus the virtual exit `cfg.exit()`.
    pub pdom: DomTree,
    pub loops: LoopForest,
}

impl ControlFlow {
    /// Analyse `f`; fails on out-of-body targets and on irreducible control flow.
    pub fn analyze(f: &Function) -> Result<ControlFlow, AnalysisError> {
        if f.body.is_empty() {
            return Err(AnalysisError::new(
                &f.name,
                f.span,
                "the function has an empty body",
            ));
        }
        let cfg = Cfg::build(f)?;
        let succ = cfg.succs();
        let dom = DomTree::dominators(&succ, cfg.entry());
        let pdom = DomTree::post_dominators(&cfg.succs_with_exit(), cfg.exit());
        let loops = LoopForest::compute(&succ, &dom).map_err(|e| {
            let inst = &f.body[cfg.blocks[e.from].last_pc() as usize];
            let to = cfg.blocks[e.to].start;
            let name = f
                .label_at(to)
                .map_or(format!("pc {to}"), |l| format!("`{l}` (pc {to})"));
            let msg = format!(
                "irreducible control flow: this edge to {name} closes a cycle that can also be \
                 entered elsewhere (its target does not dominate it)"
            );
            AnalysisError::new(&f.name, inst.span, msg)
        })?;
        Ok(ControlFlow {
            cfg,
            dom,
            pdom,
            loops,
        })
    }
}
