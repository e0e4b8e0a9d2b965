//! A resident CTA: its shared memory and its 16 named barriers (Habermaier §5.5: barrier
//! arrival is counted per warp, one arriving lane counts its whole warp).

use crate::simt::Mask;
use gpusim_isa::{BarRed, RegId};

pub const N_BARRIERS: usize = 16;

#[derive(Clone, Debug)]
pub struct Barrier {
    /// Threads expected; `None` = every warp of the CTA that has not completed.
    pub count: Option<u32>,
    /// Expected threads fixed at creation (formal-model mode).
    pub fixed_expected: u32,
    pub arrived: u32,
    pub red: Option<BarRed>,
    pub popc: u32,
    pub all: bool,
    pub any: bool,
    /// Waiting warps (SM warp slot) and, for `bar.red`, the destination and lanes to write.
    pub waiters: Vec<(usize, Option<(RegId, Mask)>)>,
    /// Under independent thread scheduling, the instruction the first threads wait at, for a
    /// barrier every thread of the CTA takes part in (no thread count).
    pub waited_at: Option<Site>,
}

/// The instruction a barrier arrival executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub func: u32,
    pub pc: u32,
    /// PTX line, for messages.
    pub line: u32,
    /// `bar.sync`, `bar.red`, `barrier.sync.aligned`: every thread must execute this very
    /// instruction. `barrier.sync` without `.aligned` lets threads meet at different ones.
    pub aligned: bool,
}

pub struct Cta {
    pub ctaid: [u32; 3],
    pub shared: Vec<u8>,
    pub barriers: [Option<Barrier>; N_BARRIERS],
    pub warps: Vec<usize>,
    pub n_warps: u32,
    pub completed_warps: u32,
    pub threads: u32,
    pub regs: u32,
    pub shared_bytes: u32,
    /// Arrivals are counted per thread, not per warp (independent thread scheduling: a
    /// diverged warp reaches a barrier group by group); a barrier without a count then waits
    /// for every thread that has not exited.
    pub thread_arrivals: bool,
    /// Threads that have exited (counted only with `thread_arrivals`).
    pub exited_threads: u32,
    /// Warps suspended in `mbarrier.try_wait` on this CTA's barriers.
    pub mbar_waiters: Vec<super::async_state::MbarWaiter>,
    /// The CTA's linear id in the grid (x fastest).
    pub linear: u64,
    /// Its cluster and where the cluster's CTAs run.
    pub cluster: super::cluster::ClusterLink,
    /// Each warpgroup's wgmma instruction sequence not yet reached by all its warps.
    pub wgmma_log: super::wgmma_state::WarpgroupLog,
}

/// A `bar.red` result to write: destination register, lanes, value.
pub type RedWrite = (RegId, Mask, u64);

/// What a completed barrier releases: warp slots, and for bar.red the value for each.
pub struct Release {
    pub barid: usize,
    pub warps: Vec<(usize, Option<RedWrite>)>,
}

pub struct Arrival {
    pub barid: usize,
    pub count: Option<u32>,
    pub red: Option<BarRed>,
    /// Predicate values of the participating lanes (bar.red), as (lanes, true lanes).
    pub preds: (Mask, Mask),
    pub wait: Option<(usize, Option<(RegId, Mask)>)>,
    /// Threads this arrival counts: the warp size (§5.5), or the arriving thread group's size
    /// with `thread_arrivals`.
    pub threads: u32,
    pub site: Site,
}

impl Cta {
    /// Threads a barrier without a count waits for: every warp that has not completed
    /// (Habermaier §5.5 counts whole warps), or every thread that has not exited.
    fn live_threads(&self, warp_size: u32) -> u32 {
        if self.thread_arrivals {
            self.threads - self.exited_threads
        } else {
            (self.n_warps - self.completed_warps) * warp_size
        }
    }

    /// Register one warp's arrival. Errors describe inconsistent use (Habermaier `prepBar` ⊥).
    pub fn arrive(
        &mut self,
        a: Arrival,
        warp_size: u32,
        hardware_exit_rule: bool,
    ) -> Result<Option<Release>, String> {
        let live = self.live_threads(warp_size);
        let bar = self.barriers[a.barid].get_or_insert_with(|| Barrier {
            count: a.count,
            fixed_expected: a.count.unwrap_or(live),
            arrived: 0,
            red: a.red,
            popc: 0,
            all: true,
            any: false,
            waiters: Vec::new(),
            waited_at: None,
        });
        if bar.count != a.count {
            let said = |c: Option<u32>| match c {
                Some(n) => format!("a thread count of {n}"),
                None => "no thread count (all the CTA's threads)".to_string(),
            };
            return Err(format!(
                "barrier {} used with {} and, by another warp, with {}",
                a.barid,
                said(bar.count),
                said(a.count)
            ));
        }
        if bar.red != a.red {
            return Err(format!(
                "barrier {} mixes bar.red with another barrier operation",
                a.barid
            ));
        }
        if self.thread_arrivals && a.count.is_none() && a.wait.is_some() {
            check_same_instruction(a.barid, bar, a.site)?;
        }
        bar.arrived += a.threads;
        let (lanes, trues) = a.preds;
        bar.popc += trues.count_ones();
        bar.all &= trues == lanes;
        bar.any |= trues != 0;
        if let Some(w) = a.wait {
            bar.waiters.push(w);
        }
        Ok(self.try_complete(a.barid, warp_size, hardware_exit_rule))
    }

    /// Complete the barrier if enough threads have arrived.
    pub fn try_complete(
        &mut self,
        barid: usize,
        warp_size: u32,
        hardware_exit_rule: bool,
    ) -> Option<Release> {
        let live = self.live_threads(warp_size);
        let bar = self.barriers[barid].as_ref()?;
        let expected = match (bar.count, hardware_exit_rule) {
            (Some(c), _) => c,
            (None, true) => live,
            (None, false) => bar.fixed_expected,
        };
        if bar.arrived < expected {
            return None;
        }
        let bar = self.barriers[barid].take().unwrap();
        let value = match bar.red {
            Some(BarRed::Popc) => bar.popc as u64,
            Some(BarRed::And) => bar.all as u64,
            Some(BarRed::Or) => bar.any as u64,
            None => 0,
        };
        Some(Release {
            barid,
            warps: bar
                .waiters
                .into_iter()
                .map(|(w, d)| (w, d.map(|(r, m)| (r, m, value))))
                .collect(),
        })
    }
}

/// Independent thread scheduling: threads waiting at one CTA-wide barrier at two different
/// instructions, one of them aligned, is barrier divergence. PTX ISA 9.0 `barrier{.cta}`: "The
/// optional .aligned modifier indicates that all threads in CTA will execute the same
/// barrier{.cta} instruction. In conditionally executed code, an aligned barrier{.cta}
/// instruction should only be used if it is known that all threads in CTA evaluate the
/// condition identically, otherwise behavior is undefined"; `bar.sync` and `bar.red` are the
/// aligned forms. Without `.aligned` (`barrier.sync`) threads may meet at different
/// instructions, so that stays legal. With a thread count the ISA's own producer/consumer use
/// (`bar.arrive` in producers, `bar.sync` in consumers, one id) meets at different
/// instructions, so only CTA-wide barriers are checked. The warp-synchronous policies keep the
/// formal model's rule (Habermaier §5.5: arrivals are counted per barrier id).
fn check_same_instruction(barid: usize, bar: &mut Barrier, here: Site) -> Result<(), String> {
    let first = *bar.waited_at.get_or_insert(here);
    if (first.func, first.pc) == (here.func, here.pc) || !(first.aligned || here.aligned) {
        return Ok(());
    }
    Err(format!(
        "aligned barrier {barid} waited at by threads at two different instructions, lines {} \
         and {} (PTX ISA barrier{{.cta}}.aligned: every thread of the CTA executes the same \
         barrier instruction; bar.sync and bar.red are aligned, barrier.sync without .aligned \
         may meet at different ones)",
        first.line, here.line
    ))
}
