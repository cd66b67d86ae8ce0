//! The socket server: accepts clients, reads one request line at a time, answers on the
//! blocking pool, writes one response line. A bad client only ever ends its own connection.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{watch, Semaphore};

use super::error::ServiceError;
use super::framing::{read_line, Line};
use super::handler::Handler;
use super::location::my_uid;
use super::protocol::{parse_request, ErrorCode, Fault, Response, MAX_LINE_BYTES};

/// Limits applied to every client.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client may take to send a whole request line, or to read a response.
    pub client_timeout: Duration,
    /// Clients served at once; more are answered `busy` and closed.
    pub max_clients: usize,
}

/// How often the socket file is looked for (see [`rebound`]).
const SOCKET_CHECK: Duration = Duration::from_secs(5);

/// Accepts clients on `listener`, bound at `socket`, until `shutdown` changes (or its
/// sender goes).
pub async fn serve(
    mut listener: UnixListener,
    socket: &Path,
    handler: Arc<Handler>,
    limits: Limits,
    mut shutdown: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_clients));
    let me = my_uid();
    let mut check = tokio::time::interval(SOCKET_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = check.tick() => {
                if let Some(fresh) = rebound(socket) {
                    listener = fresh;
                }
                continue;
            }
            _ = shutdown.changed() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, mostly: let clients finish before accepting more.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // The socket is 0600 in a 0700 folder; this also stops a client that got a
        // descriptor passed from elsewhere. Root may always ask.
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me || cred.uid() == 0 => {}
            Ok(cred) => {
                tracing::warn!(uid = cred.uid(), "refused a client of another user");
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read a client's credentials; refused");
                continue;
            }
        }
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            let fault = Fault::new(
                ErrorCode::Busy,
                format!(
                    "the backend is busy: {} clients are connected",
                    limits.max_clients
                ),
            );
            tokio::spawn(refuse(stream, fault, limits.client_timeout));
            continue;
        };
        let (handler, shutdown) = (handler.clone(), shutdown.clone());
        tokio::spawn(async move {
            handler.live.clients.fetch_add(1, Ordering::Relaxed);
            connection(stream, &handler, limits, shutdown).await;
            handler.live.clients.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
        });
    }
    tracing::debug!("stopped accepting clients");
}

/// A new listener at `socket` when its file is gone (a cleaner of the runtime folder, a
/// person's `rm`): the backend kept the index and the watch, but no client could reach it,
/// and a second `brain serve` is refused by the lock. `None` while the file is there.
fn rebound(socket: &Path) -> Option<UnixListener> {
    match std::fs::symlink_metadata(socket) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        _ => return None,
    }
    let bound = socket
        .parent()
        .map_or(Ok(()), super::location::ensure_private_dir)
        .and_then(|()| super::location::bind_socket(socket))
        .and_then(|l| UnixListener::from_std(l).map_err(|e| ServiceError::io(socket, e)));
    match bound {
        Ok(listener) => {
            tracing::warn!(socket = %socket.display(), "the socket was removed; listening on a new one");
            Some(listener)
        }
        Err(e) => {
            tracing::warn!(error = %e, "the socket was removed and cannot be made again");
            None
        }
    }
}

async fn refuse(mut stream: UnixStream, fault: Fault, timeout: Duration) {
    let _ = tokio::time::timeout(
        timeout,
        stream.write_all(&Response::err(None, fault).to_line()),
    )
    .await;
}

/// Serves one client until it leaves, misbehaves, idles out, or the backend stops.
async fn connection(
    stream: UnixStream,
    handler: &Arc<Handler>,
    limits: Limits,
    mut shutdown: watch::Receiver<bool>,
) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    loop {
        let read = tokio::select! {
            r = tokio::time::timeout(limits.client_timeout, read_line(&mut reader, MAX_LINE_BYTES)) => r,
            _ = shutdown.changed() => return,
        };
        let (bytes, last) = match read {
            Err(_) => {
                tracing::debug!("closed an idle client");
                return;
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "client read failed");
                return;
            }
            Ok(Ok(Line::TooLong)) => {
                let fault = Fault::new(
                    ErrorCode::TooLarge,
                    format!("request line is longer than {MAX_LINE_BYTES} bytes"),
                );
                tracing::warn!("closed a client that sent an oversized request");
                let _ = send(&mut writer, &Response::err(None, fault), limits).await;
                return;
            }
            Ok(Ok(Line::Complete(bytes))) => (bytes, false),
            Ok(Ok(Line::Eof(bytes))) => (bytes, true),
        };
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            let (response, keep) = match parse_request(&bytes) {
                Ok(request) => match other_settings(handler, &request) {
                    Some(fault) => (Response::err(request.id, fault), true),
                    None => (answer(handler, request.id, request.op).await, true),
                },
                Err(response) => {
                    tracing::debug!("closed a client that sent a malformed request");
                    (*response, false)
                }
            };
            handler.live.requests.fetch_add(1, Ordering::Relaxed);
            if send(&mut writer, &response, limits).await.is_err() || !keep {
                return;
            }
        }
        if last {
            return;
        }
    }
}

/// Refuses a request from a client whose settings name another model than this backend
/// embeds with: answered here, it would get this model's neighbours where it asked for its
/// own (or an unknown model accepted without a word). Who is serving, and its status, are
/// still answered: they describe the backend itself; and so are the requests no model
/// answers (a note, its links, `check`, `index-md`, a saved entry): refused, a typo in
/// `BRAIN_MODEL` turned `brain check` into advice to restart the backend.
fn other_settings(handler: &Handler, request: &super::protocol::Request) -> Option<Fault> {
    use super::protocol::Op;
    let theirs = request.client_model.as_deref()?;
    let ours = handler.engine.config().model_label();
    let without_model = matches!(
        request.op,
        Op::Hello
            | Op::Status
            | Op::Get(_)
            | Op::Links { .. }
            | Op::Check { .. }
            | Op::IndexMd { .. }
            | Op::Saved { .. }
    );
    if theirs == ours || without_model {
        return None;
    }
    Some(Fault::new(
        ErrorCode::OtherSettings,
        format!(
            "the backend serving this brain embeds with {ours}, and this command's settings \
             (BRAIN_MODEL or the config file) name {theirs}; restart 'brain serve' (or the \
             app) to serve these settings"
        ),
    ))
}

async fn answer(handler: &Arc<Handler>, id: Option<u64>, op: super::protocol::Op) -> Response {
    let h = handler.clone();
    match tokio::task::spawn_blocking(move || h.handle(op)).await {
        Ok(Ok(reply)) => Response::ok(id, reply),
        Ok(Err(fault)) => Response::err(id, fault),
        Err(e) => {
            tracing::error!(error = %e, "a request handler panicked");
            Response::err(
                id,
                Fault::new(
                    ErrorCode::Internal,
                    "the backend failed on this request; see its log",
                ),
            )
        }
    }
}

/// Writes a response, giving up on a client that stops reading.
async fn send(
    writer: &mut tokio::net::unix::OwnedWriteHalf,
    response: &Response,
    limits: Limits,
) -> Result<(), ()> {
    match tokio::time::timeout(limits.client_timeout, writer.write_all(&response.to_line())).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "client left before its answer was written");
            Err(())
        }
        Err(_) => {
            tracing::debug!("client stopped reading its answer");
            Err(())
        }
    }
}
