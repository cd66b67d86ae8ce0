//! How long an embedding pass has still to go.

use std::time::Duration;

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
