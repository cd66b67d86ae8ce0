//! A few threads that stay awake through one query's matrix products: the parallel loop of
//! the few-token pass ([`super::half`]).
//!
//! Why not rayon, which the batched pass uses: a query makes two dozen products of 30 to
//! 150 µs each, with a few microseconds of serial work between them. Rayon's idle workers
//! go to sleep in between, and waking one costs tens of microseconds, so on two cores a
//! query took as long on two threads as on one while burning 60% more CPU. Here each
//! helper spins for a short while ([`SPIN`]) after its last part before it sleeps, so the
//! products of one query find it awake; a query's helpers then sleep again until the
//! next. Parts are claimed one at a time from a shared counter, so faster cores (Apple
//! silicon's performance cores beside its efficiency cores) take more of them.
//!
//! One product at a time: a caller that finds the team busy (two queries in two threads of
//! the backend, or a product started from inside a part) runs its parts itself.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, OnceLock, TryLockError};
use std::thread;
use std::time::{Duration, Instant};

/// How long a helper keeps looking for work after its last part before it sleeps: longer
/// than the serial work between two products of a query, far shorter than the time
/// between two keystrokes.
const SPIN: Duration = Duration::from_micros(300);

/// Helpers at most: past eight threads a query's products are bound by memory, not cores.
const MAX_HELPERS: usize = 7;

/// One call's parts, on the caller's stack while it runs.
struct Job<'a> {
    work: &'a (dyn Fn(usize) + Sync),
    parts: usize,
    /// The next part nobody has claimed.
    next: AtomicUsize,
    /// Parts run to their end (or to a panic).
    finished: AtomicUsize,
    /// The first part's panic, raised again by the caller once every part is over.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<'a> Job<'a> {
    fn new(parts: usize, work: &'a (dyn Fn(usize) + Sync)) -> Job<'a> {
        Job {
            work,
            parts,
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            panic: Mutex::new(None),
        }
    }

    /// Claims and runs parts until none is left.
    fn help(&self) {
        loop {
            let part = self.next.fetch_add(1, SeqCst);
            if part >= self.parts {
                return;
            }
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (self.work)(part))) {
                let mut first = self.panic.lock().unwrap_or_else(|p| p.into_inner());
                if first.is_none() {
                    *first = Some(payload);
                } else {
                    // Dropping a payload may itself panic, outside any catch_unwind: a
                    // second panic's payload is leaked instead.
                    std::mem::forget(payload);
                }
            }
            self.finished.fetch_add(1, SeqCst);
        }
    }

    /// Raises the first part's panic again, if one panicked.
    fn raise(self) {
        let payload = self.panic.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some(payload) = payload {
            panic::resume_unwind(payload);
        }
    }
}

/// What the caller and its helpers share.
struct Shared {
    /// The running job, null between jobs. Its lifetime is the caller's: see [`run`].
    job: AtomicPtr<Job<'static>>,
    /// Bumped for each job, so a helper knows there is something new.
    generation: AtomicUsize,
    /// Helpers between reading `job` and leaving it: the caller waits for zero before its
    /// job goes out of scope.
    busy: AtomicUsize,
    /// Helpers asleep (or about to be).
    sleeping: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

struct Team {
    shared: &'static Shared,
    /// Held by the one caller whose job is running.
    running: Mutex<()>,
    helpers: usize,
}

fn team() -> &'static Team {
    static TEAM: OnceLock<Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            job: AtomicPtr::new(ptr::null_mut()),
            generation: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
            sleeping: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }));
        // RAYON_NUM_THREADS, when set, bounds this parallel loop as it does the others.
        let wanted = rayon::current_num_threads()
            .saturating_sub(1)
            .min(MAX_HELPERS);
        let helpers = (0..wanted)
            .filter(|i| {
                thread::Builder::new()
                    .name(format!("brain-query-{i}"))
                    .spawn(move || helper(shared))
                    .is_ok()
            })
            .count();
        Team {
            shared,
            running: Mutex::new(()),
            helpers,
        }
    })
}

/// Threads that run parts: the caller and its helpers.
pub fn threads() -> usize {
    team().helpers + 1
}

/// Runs `work(0)`, ..., `work(parts - 1)` across the caller and the helpers; returns when
/// all have run. A panic in a part is raised again here (the first one, as it was), after
/// every part has finished.
pub fn run(parts: usize, work: &(dyn Fn(usize) + Sync)) {
    let team = team();
    let job = Job::new(parts, work);
    let _running = match team.running.try_lock() {
        Ok(guard) => guard,
        // A poisoned lock only means a caller panicked after its job was over.
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return serially(job),
    };
    if team.helpers == 0 || parts < 2 {
        return serially(job);
    }
    let s = team.shared;
    // SAFETY (the lifetime erased here): the pointer is cleared below, and this function
    // does not return before every helper that could have read it has left it (`busy`).
    // Nothing between here and there can unwind: parts' panics are caught in `help`.
    let erased = ptr::from_ref(&job).cast::<Job<'static>>().cast_mut();
    s.job.store(erased, SeqCst);
    s.generation.fetch_add(1, SeqCst);
    if s.sleeping.load(SeqCst) > 0 {
        let _lock = s.sleep.lock().unwrap_or_else(|p| p.into_inner());
        s.wake.notify_all();
    }
    job.help();
    wait_until(|| job.finished.load(SeqCst) == parts);
    s.job.store(ptr::null_mut(), SeqCst);
    wait_until(|| s.busy.load(SeqCst) == 0);
    job.raise();
}

/// Every part on this thread, with the same contract as [`run`]: all parts run, then the
/// first panic is raised.
fn serially(job: Job<'_>) {
    job.help();
    job.raise();
}

/// Spins until `done`, yielding now and then: the parts it waits for are microseconds
/// away unless their thread lost its core, and then it should get it back.
fn wait_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins % 1024 == 0 {
            thread::yield_now();
        }
    }
}

/// A helper's life: wait for a new generation (spinning, then asleep), help, repeat.
fn helper(s: &'static Shared) {
    let mut seen = s.generation.load(SeqCst);
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        while s.generation.load(SeqCst) == seen {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins % 256 != 0 {
                continue;
            }
            // Let a thread that has real work run first (a busy machine, the keyword
            // list of the same hybrid search).
            thread::yield_now();
            if start.elapsed() > SPIN {
                let mut lock = s.sleep.lock().unwrap_or_else(|p| p.into_inner());
                s.sleeping.fetch_add(1, SeqCst);
                while s.generation.load(SeqCst) == seen {
                    lock = s.wake.wait(lock).unwrap_or_else(|p| p.into_inner());
                }
                s.sleeping.fetch_sub(1, SeqCst);
            }
        }
        seen = s.generation.load(SeqCst);
        // `busy` first, then the pointer: a caller that has cleared the pointer and then
        // reads `busy` as zero knows no helper still holds its job (all SeqCst).
        s.busy.fetch_add(1, SeqCst);
        let job = s.job.load(SeqCst);
        // SAFETY: non-null means the caller has not cleared it yet, and it will not
        // return while `busy` counts this helper.
        if let Some(job) = unsafe { job.as_ref() } {
            job.help();
        }
        s.busy.fetch_sub(1, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_across_many_calls_and_callers() {
        let calls: Vec<Vec<AtomicUsize>> = (0..4)
            .map(|_| (0..37).map(|_| AtomicUsize::new(0)).collect())
            .collect();
        thread::scope(|scope| {
            for counts in &calls {
                scope.spawn(move || {
                    for _ in 0..200 {
                        run(counts.len(), &|p| {
                            counts[p].fetch_add(1, SeqCst);
                        });
                    }
                });
            }
        });
        for counts in &calls {
            assert!(counts.iter().all(|c| c.load(SeqCst) == 200));
        }
    }

    #[test]
    fn a_part_may_run_a_product_of_its_own() {
        let total = AtomicUsize::new(0);
        run(4, &|_| {
            run(3, &|_| {
                total.fetch_add(1, SeqCst);
            })
        });
        assert_eq!(total.load(SeqCst), 12);
    }

    #[test]
    fn a_panicking_part_is_raised_after_the_others_finish() {
        let finished = AtomicUsize::new(0);
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            run(8, &|p| {
                if p == 3 {
                    panic!("part 3");
                }
                finished.fetch_add(1, SeqCst);
            })
        }));
        let payload = caught.expect_err("the panic is raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"part 3"));
        assert_eq!(finished.load(SeqCst), 7);
        // The team still works afterwards.
        let after = AtomicUsize::new(0);
        run(5, &|_| {
            after.fetch_add(1, SeqCst);
        });
        assert_eq!(after.load(SeqCst), 5);
    }
}
