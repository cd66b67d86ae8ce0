//! The tool calls being answered, which the end of stdin waits for.
//!
//! A client that sends its requests and closes stdin (`printf '%s\n' "$init" "$call" | brain
//! mcp`, a script) is owed every answer. The protocol library, told the input has ended,
//! gives calls still running five seconds and then drops them unanswered: a first search
//! of a large brain (its first sync) takes longer. So the end of stdin is passed on only
//! once no call runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// How long no call must run before the input's end is passed on: the lines passed on
/// just before it reach a tool within this time.
pub const GRACE: Duration = Duration::from_millis(200);

/// The longest the input's end waits for calls: one that hangs does not keep the server
/// alive for good after its client has gone.
pub const LIMIT: Duration = Duration::from_secs(600);

/// The count of calls running.
#[derive(Debug, Default)]
pub struct InFlight {
    running: AtomicUsize,
    ended: Notify,
}

/// One call running; it ends when dropped (answered, failed or cancelled).
#[derive(Debug)]
pub struct Call(Arc<InFlight>);

impl InFlight {
    /// Counts a call as running until the returned [`Call`] is dropped.
    pub fn begin(self: &Arc<Self>) -> Call {
        self.running.fetch_add(1, Ordering::SeqCst);
        Call(self.clone())
    }

    /// Returns once no call has run for [`GRACE`] (or `limit` has passed).
    pub async fn settled(&self, grace: Duration, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Asked for before the count is read: a call ending in between still wakes it.
            let ended = self.ended.notified();
            if self.running.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(grace.min(limit)).await;
                if self.running.load(Ordering::SeqCst) == 0
                    || tokio::time::Instant::now() >= deadline
                {
                    return;
                }
                continue;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                tracing::warn!("stdin ended; calls still running were given up on");
                return;
            }
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settles_only_once_every_call_has_ended_or_the_limit() {
        let grace = Duration::from_millis(20);
        let flight = Arc::new(InFlight::default());
        let call = flight.begin();
        let waiter = {
            let flight = flight.clone();
            tokio::spawn(async move { flight.settled(grace, LIMIT).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiter.is_finished(), "a call runs");
        drop(call);
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("settled once the call ended")
            .unwrap();
        // A call that never ends is given up on at the limit.
        let _hung = flight.begin();
        let started = std::time::Instant::now();
        flight.settled(grace, Duration::from_millis(200)).await;
        assert!(started.elapsed() >= Duration::from_millis(200));
    }
}
