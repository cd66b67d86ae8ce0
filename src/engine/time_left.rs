//! How long an embedding pass has still to go.

use std::time::{Duration, Instant};

use super::Engine;

/// A pass of at most this many passages is estimated from its count alone: reading the
/// lengths scans every pending passage, a second scan for a pass that embeds one saved
/// note, and its few seconds need no better.
const READ_LENGTHS_FROM: u64 = 256;

/// The time left of an embedding pass as its progress comes (`brain index`'s bar and
/// line, the backend's status line the app shows): from the bytes left ([`Backlog`]),
/// read once the pass has counted its work and timed from then. While the pass waits for
/// another process's, none: that pace is not this one's, and its own backlog is read when
/// its own work begins.
#[derive(Default)]
pub struct Eta {
    backlog: Option<(Backlog, Instant)>,
}

impl Eta {
    /// After `done` of `total` passages of `engine`'s pass: the time left, once known.
    pub fn update(&mut self, engine: &Engine, done: u64, total: u64) -> Option<Duration> {
        if engine.waiting_for_other_pass() {
            self.backlog = None;
            return None;
        }
        if self.backlog.is_none() && total > 0 {
            // Unread (a busy index), every passage counts alike: the rate in passages.
            let even = || vec![1; total as usize];
            let lengths = match total > READ_LENGTHS_FROM {
                true => engine.pending_lengths().unwrap_or_else(|_| even()),
                false => even(),
            };
            self.backlog = Some((Backlog::new(lengths), Instant::now()));
        }
        let (backlog, from) = self.backlog.as_ref()?;
        backlog.time_left(done, total, from.elapsed())
    }
}

/// What a pass has to embed, passage by passage in its order, as running sums of their
/// lengths: the time left is the bytes left at the rate in bytes so far (`brain index`'s
/// line and the backend's, which the app shows). A pass takes the
/// shortest passages first, so a rate in passages said a third to a half of the time
/// really left (about 45 s with 300 s to go, on 6,010 passages).
pub struct Backlog {
    /// `sums[i]`: the bytes of the first `i` passages.
    sums: Vec<u64>,
}

impl Backlog {
    /// The passages' lengths in bytes, in the order the pass embeds them.
    pub fn new(lengths: Vec<u64>) -> Backlog {
        let mut sums = Vec::with_capacity(lengths.len() + 1);
        sums.push(0);
        let mut sum = 0;
        for n in lengths {
            sum += n;
            sums.push(sum);
        }
        Backlog { sums }
    }

    /// The time left after `done` of `total` passages in `took`; `None` before any is done.
    /// Passages the pass counted beyond those read at its start (a sync meanwhile) are
    /// taken to be as long as the average.
    pub fn time_left(&self, done: u64, total: u64, took: Duration) -> Option<Duration> {
        let known = (self.sums.len() - 1) as u64;
        let done_bytes = self.sums[done.min(known) as usize];
        if done == 0 || done_bytes == 0 {
            return None;
        }
        let all = self.sums[known as usize];
        let average = all / known.max(1);
        let left = all.saturating_sub(done_bytes) + total.saturating_sub(known) * average;
        Some(took.mul_f64(left as f64 / done_bytes as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shortest first: half the passages done in 10 s is a tenth of the bytes when the
    /// second half is nine times as long, so 90 s are left, not 10.
    #[test]
    fn the_time_left_counts_the_longer_passages_still_to_come() {
        let mut lengths = vec![10; 50];
        lengths.extend(vec![90; 50]);
        let work = Backlog::new(lengths);
        let secs = |done, total| {
            work.time_left(done, total, Duration::from_secs(10))
                .map(|d| d.as_secs())
        };
        assert_eq!(secs(50, 100), Some(90));
        assert_eq!(secs(0, 100), None);
        // Ten passages more than were read at the start, at the average length (50).
        assert_eq!(secs(50, 110), Some(100));
        assert_eq!(secs(100, 100), Some(0));
    }
}
