//! The MCP server's output: stdout, watched for a client that stops reading it.
//!
//! A client that closes its end of the pipe and keeps stdin open (it crashed half-way, or
//! hands stdin to a child) has left the session, but the protocol library only logs each
//! failed reply ("fail to response message: Broken pipe") and reads the next request, so
//! the server ran, and answered into nothing, until stdin closed.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio::sync::Notify;

/// `inner`, telling `gone` when a write finds the reader gone.
pub struct Watched<W> {
    inner: W,
    gone: Arc<Notify>,
}

/// Wraps `inner`: `gone` is notified (once is enough) at the first broken pipe.
pub fn watched<W>(inner: W, gone: Arc<Notify>) -> Watched<W> {
    Watched { inner, gone }
}

impl<W> Watched<W> {
    fn saw<T>(&self, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Err(e)) = &polled {
            if e.kind() == io::ErrorKind::BrokenPipe {
                self.gone.notify_one();
            }
        }
        polled
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Watched<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.saw(polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.saw(polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_reader_gone_is_told_once_and_the_error_passed_on() {
        let (writer, reader) = tokio::io::duplex(64);
        drop(reader);
        let gone = Arc::new(Notify::new());
        let mut out = watched(writer, gone.clone());
        let err = out.write_all(b"{}\n").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        // The permit waits for whoever listens later.
        tokio::time::timeout(std::time::Duration::from_secs(1), gone.notified())
            .await
            .unwrap();
    }
}
