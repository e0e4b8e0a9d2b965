//! How many threads gpusim's independent work runs on, and a parallel map over independent
//! items whose results come back in the items' order, so the output never depends on the
//! thread count or on which thread finished first.
//!
//! The count is `--threads N` where a command takes it, else the `GPUSIM_THREADS`
//! environment variable, else the machine's cores (`std::thread::available_parallelism`) for
//! independent runs (`gpusim check`, `gpusim fuzz`) and one thread for the SMs of a
//! simulation (`core::crew`: on the machines measured so far, stepping SMs on several
//! threads every cycle is not faster yet).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that sets the thread count when `--threads` is not given.
pub const ENV: &str = "GPUSIM_THREADS";

/// The thread count: `cli` if given, else `GPUSIM_THREADS`, else the machine's cores. An
/// invalid count (0, or not a number) is an error naming where it came from.
pub fn resolve(cli: Option<usize>) -> Result<usize, String> {
    resolve_or(
        cli,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    )
}

/// As `resolve`, with `unset` when neither `--threads` nor `GPUSIM_THREADS` says.
pub fn resolve_or(cli: Option<usize>, unset: usize) -> Result<usize, String> {
    if let Some(n) = cli {
        return positive(n).ok_or_else(|| "--threads: must be at least 1, got 0".to_string());
    }
    match std::env::var(ENV) {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(positive)
            .ok_or_else(|| format!("{ENV}={v}: must be a whole number of threads, at least 1")),
        Err(_) => Ok(unset.max(1)),
    }
}

fn positive(n: usize) -> Option<usize> {
    (n > 0).then_some(n)
}

/// `f(i)` for every `i` in `0..n`, on up to `threads` threads (the calling thread is one of
/// them); the results in index order. Threads take the next index as they finish one, so
/// uneven items balance. With one thread (or one item) nothing is spawned.
pub fn map<R: Send>(n: usize, threads: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return (0..n).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return done;
            }
            done.push((i, f(i)));
        }
    };
    let mut all: Vec<(usize, R)> = crossbeam::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(|_| work())).collect();
        let mut all = work();
        for h in helpers {
            // A panic in `f` on a helper is re-raised here, as it would be serially.
            all.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        all
    })
    .unwrap_or_else(|e| std::panic::resume_unwind(e));
    all.sort_unstable_by_key(|&(i, _)| i);
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_index_order_whatever_the_thread_count() {
        let serial = map(100, 1, |i| i * i);
        for t in [2, 3, 8, 200] {
            assert_eq!(map(100, t, |i| i * i), serial, "{t} threads");
        }
        assert!(map(0, 4, |i| i).is_empty());
    }

    #[test]
    fn every_item_runs_once_on_several_threads() {
        let seen: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
        let threads = std::sync::Mutex::new(std::collections::HashSet::new());
        map(50, 4, |i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
            threads.lock().unwrap().insert(std::thread::current().id());
            // Long enough that the helpers take items too.
            std::thread::sleep(std::time::Duration::from_millis(2));
        });
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        assert!(threads.lock().unwrap().len() > 1, "the work was shared");
    }

    #[test]
    fn a_count_from_the_command_line_wins_and_zero_is_refused() {
        assert_eq!(resolve(Some(3)), Ok(3));
        assert!(resolve(Some(0)).unwrap_err().contains("--threads"));
    }
}
