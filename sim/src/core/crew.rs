//! The SM phase of a cycle on several threads (`--threads N`). While it steps, an SM touches
//! only its own state (`Sm::step`; the memory exchange and the messages between SMs come after,
//! in SM-id order), so the SMs awake in a cycle are split among the threads and their results
//! gathered in the order they were handed out: exactly what stepping them one after another
//! gives, for any thread count (`sim/tests/traces.rs` runs every trace on 1, 2 and 3 threads).
//!
//! The helper threads live for the whole launch (a crossbeam scope around the cycle loop) and
//! wait on a channel. Waking a sleeping thread costs tens of microseconds on a virtual
//! machine, more than a phase's share, so a waiting thread first spins for up to `SPIN` —
//! but only while the crews of this process have no more threads than the machine has cores
//! (`ACTIVE`): a spinning thread that takes the core of the one it waits for makes things far
//! worse. A phase goes parallel only when its SMs' recent cost per step, times the SMs awake,
//! reaches `min_phase` (zero in the tests: every phase with two SMs awake goes parallel).
//! Those choices depend on the host; the results never do.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam::channel::{unbounded, Receiver, Sender};

use super::fault::Fault;
use super::sm::{Shared, Sm, StepResult};

/// How a launch uses threads: `threads` for the SM phase (1: this thread only), going
/// parallel for a phase whose estimated host time reaches `min_phase`.
#[derive(Clone, Copy, Debug)]
pub struct Parallel {
    pub threads: usize,
    pub min_phase: Duration,
}

impl Default for Parallel {
    /// One thread. (With more, a phase goes parallel from 50 µs of work: a hand-over costs a
    /// few microseconds of wake-ups on this project's machines.)
    fn default() -> Parallel {
        Parallel {
            threads: 1,
            min_phase: Duration::from_micros(50),
        }
    }
}

impl Parallel {
    /// `threads` threads with the default threshold.
    pub fn threads(threads: usize) -> Parallel {
        Parallel {
            threads,
            ..Parallel::default()
        }
    }
}

/// One SM's step: its share of the livelock epoch's progress, whether it left work for the
/// exchange or messages, and its result.
pub struct Stepped {
    pub progress: u64,
    pub touched: bool,
    pub result: Result<StepResult, Fault>,
}

/// Step `sm` in `cycle`, first accounting the cycles it slept since `last` (the last cycle it
/// was stepped or accounted for).
pub fn step_one(
    sm: &mut Sm,
    last: Option<u64>,
    cycle: u64,
    sh: &Shared,
    epoch_start: u64,
) -> Stepped {
    if let Some(l) = last {
        if l + 1 < cycle {
            sm.account_idle(l + 1, cycle - l - 1, sh.prog);
        }
    }
    let mut own_epoch = epoch_start;
    let result = sm.step(cycle, sh, &mut own_epoch);
    Stepped {
        progress: own_epoch - epoch_start,
        touched: sm.has_deferred() || !sm.outbox.is_empty(),
        result,
    }
}

/// The SMs of a launch, for the helpers: each job names SMs no other thread touches until the
/// phase's results are all back.
#[derive(Clone, Copy)]
struct SmsPtr(*mut Sm);

// SAFETY: a job's pointer is dereferenced only at the indices of that job, which no other
// thread touches while the job runs: `Crew::step` hands out disjoint index sets and does not
// touch `sms` itself, except through its own disjoint share, until every job has reported.
unsafe impl Send for SmsPtr {}

struct Job {
    sms: SmsPtr,
    /// (SM index, its `last`).
    items: Vec<(usize, Option<u64>)>,
    cycle: u64,
    epoch_start: u64,
}

/// A helper's report: its index and its SMs' steps (or the panic of one, re-raised by the
/// caller).
type Report = (usize, std::thread::Result<Vec<Stepped>>);

/// Threads of this process's crews (their helpers and callers) while they live.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// How long a waiting thread spins before it sleeps (when `may_spin`).
const SPIN: Duration = Duration::from_micros(300);

/// Whether waiting threads may spin: the crews' threads fit the machine's cores.
fn may_spin() -> bool {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    ACTIVE.load(Ordering::Relaxed) <= cores
}

/// `rx.recv()`, first spinning for up to `SPIN` if `may_spin`.
fn recv<T>(rx: &Receiver<T>) -> Result<T, crossbeam::channel::RecvError> {
    if may_spin() {
        let start = Instant::now();
        loop {
            match rx.try_recv() {
                Ok(v) => return Ok(v),
                Err(crossbeam::channel::TryRecvError::Disconnected) => {
                    return Err(crossbeam::channel::RecvError)
                }
                Err(crossbeam::channel::TryRecvError::Empty) => {}
            }
            for _ in 0..32 {
                std::hint::spin_loop();
            }
            if start.elapsed() >= SPIN {
                break;
            }
        }
    }
    rx.recv()
}

pub struct Crew {
    /// Threads counted in `ACTIVE` (this one and the helpers).
    threads: usize,
    jobs: Vec<Sender<Job>>,
    done: Receiver<Report>,
    min_phase: Duration,
    /// Recent host time of one SM's step (exponential average), measured on this thread.
    per_sm: Duration,
}

impl Crew {
    /// A crew of `p.threads − 1` helpers spawned in `scope` (none for one thread), at most
    /// one thread per SM of the `sms` (more could never get work).
    pub fn new<'env>(
        scope: &crossbeam::thread::Scope<'env>,
        p: Parallel,
        sms: usize,
        sh: &'env Shared<'env>,
    ) -> Crew {
        let (threads, min_phase) = (p.threads.clamp(1, sms.max(1)), p.min_phase);
        ACTIVE.fetch_add(threads, Ordering::Relaxed);
        let (report, done) = unbounded::<Report>();
        let jobs = (1..threads.max(1))
            .map(|w| {
                let (tx, rx) = unbounded::<Job>();
                let report = report.clone();
                scope.spawn(move |_| helper(w, &rx, &report, sh));
                tx
            })
            .collect();
        Crew {
            threads,
            jobs,
            done,
            min_phase,
            per_sm: Duration::ZERO,
        }
    }

    /// Step the SMs `awake` (index, `last`) of `sms` in `cycle`; their steps into `out`
    /// (emptied first, reused from cycle to cycle), in `awake`'s order.
    pub fn step(
        &mut self,
        sms: &mut [Sm],
        awake: &[(usize, Option<u64>)],
        cycle: u64,
        epoch_start: u64,
        sh: &Shared,
        out: &mut Vec<Stepped>,
    ) {
        out.clear();
        let parts = (self.jobs.len() + 1).min(awake.len());
        let worth = self.per_sm * awake.len() as u32 >= self.min_phase;
        if parts < 2 || !worth {
            let step_all = |out: &mut Vec<Stepped>, sms: &mut [Sm]| {
                out.extend(
                    awake
                        .iter()
                        .map(|&(i, last)| step_one(&mut sms[i], last, cycle, sh, epoch_start)),
                )
            };
            if self.jobs.is_empty() {
                // One thread: nothing to decide, so no clock to read.
                step_all(out, sms);
            } else {
                let t = Instant::now();
                step_all(out, sms);
                self.measure(t.elapsed(), awake.len());
            }
            return;
        }
        // Contiguous shares of near-equal length; the last is this thread's.
        let share = awake.len().div_ceil(parts);
        let chunks: Vec<&[(usize, Option<u64>)]> = awake.chunks(share).collect();
        let ptr = SmsPtr(sms.as_mut_ptr());
        let (mine, theirs) = chunks.split_last().expect("at least two shares");
        for (w, items) in theirs.iter().enumerate() {
            let job = Job {
                sms: ptr,
                items: items.to_vec(),
                cycle,
                epoch_start,
            };
            self.jobs[w]
                .send(job)
                .expect("helpers live as long as the crew");
        }
        let t = Instant::now();
        let own: Vec<Stepped> = mine
            .iter()
            .map(|&(i, last)| {
                // SAFETY: `i` is in this thread's share only (see `SmsPtr`).
                let sm = unsafe { &mut *ptr.0.add(i) };
                step_one(sm, last, cycle, sh, epoch_start)
            })
            .collect();
        self.measure(t.elapsed(), mine.len());
        let mut got: Vec<Option<Vec<Stepped>>> = (0..theirs.len()).map(|_| None).collect();
        for _ in 0..theirs.len() {
            let (w, r) = recv(&self.done).expect("helpers report every job");
            got[w] = Some(r.unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        out.extend(
            got.into_iter()
                .flat_map(|r| r.expect("every share reported"))
                .chain(own),
        );
    }

    fn measure(&mut self, took: Duration, sms: usize) {
        if sms > 0 {
            let now = took / sms as u32;
            self.per_sm = (self.per_sm * 7 + now) / 8;
        }
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(self.threads, Ordering::Relaxed);
    }
}

/// Helper `w`: step the SMs of each job it receives until the crew is dropped.
fn helper(w: usize, jobs: &Receiver<Job>, report: &Sender<Report>, sh: &Shared) {
    let slot = w - 1;
    while let Ok(job) = recv(jobs) {
        let steps = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            job.items
                .iter()
                .map(|&(i, last)| {
                    // SAFETY: `i` is in this job's share only (see `SmsPtr`).
                    let sm = unsafe { &mut *job.sms.0.add(i) };
                    step_one(sm, last, job.cycle, sh, job.epoch_start)
                })
                .collect()
        }));
        if report.send((slot, steps)).is_err() {
            return;
        }
    }
}
