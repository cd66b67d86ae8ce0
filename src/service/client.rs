//! A blocking client for the socket: what the CLI, `brain get` and the MCP server use. It
//! never waits to find out that no backend runs: a Unix-socket connect either completes at
//! once or fails, and the connect here does not block either way.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use socket2::{Domain, SockAddr, Socket, Type};

use super::error::ServiceError;
use super::location::{check_owner, socket_path};
use super::protocol::{
    expect, Answer, Op, Outcome, Reply, Request, Response, ServerInfo, StatusReport,
    MAX_LINE_BYTES, PROTOCOL_VERSION,
};
use crate::index::SyncReport;
use crate::passage::{NoteRef, Passage};
use crate::search::{SearchRequest, SearchResponse};
use crate::Config;

/// How long to wait for the answer to a request about a few notes (a search, a note, a
/// draft, the status). It takes milliseconds; a backend embedding on a slow CPU answers it
/// beside the embedder (no lock between them), at worst a few times slower. Past this the
/// backend is frozen (stopped, stuck), and the command does better in-process at once.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to wait for a request that reads every note (`check`, `index-md`, `similar
/// --all`): seconds at 100k notes.
pub const WHOLE_BRAIN_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `op` may take to be answered; `None`: as long as it takes (a full reindex may
/// take minutes, and says so by its progress).
fn timeout_for(op: &Op) -> Option<Duration> {
    match op {
        Op::Reindex { .. } => None,
        Op::SimilarAll { .. } | Op::Check { .. } | Op::IndexMd { .. } => Some(WHOLE_BRAIN_TIMEOUT),
        Op::Hello
        | Op::Search(_)
        | Op::Get(_)
        | Op::Status
        | Op::Similar(_)
        | Op::Links { .. }
        | Op::Saved { .. } => Some(DEFAULT_TIMEOUT),
    }
}

/// A connection to a running backend.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<UnixStream>,
    socket: PathBuf,
    next_id: u64,
    /// Sent with each request: the model this client's settings name.
    model: Option<String>,
}

impl Client {
    /// Connects to the backend serving `config.root`, or says quickly that none does. Each
    /// request says which model `config` names, so a backend that embeds with another
    /// refuses it ([`ServiceError::is_unavailable`]) rather than answer with its own.
    pub fn connect(config: &Config) -> Result<Client, ServiceError> {
        let mut client = Client::connect_to(&socket_path(config))?;
        client.model = Some(config.model_label());
        Ok(client)
    }

    /// Connects to the socket at `path`, which must belong to this user.
    pub fn connect_to(path: &Path) -> Result<Client, ServiceError> {
        let not_running = || ServiceError::NotRunning {
            socket: path.into(),
        };
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_running()),
            Err(e) => return Err(ServiceError::io(path, e)),
        };
        check_owner(path, &meta)?;
        let io = |e| ServiceError::io(path, e);
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None).map_err(io)?;
        let addr = SockAddr::unix(path).map_err(io)?;
        // Non-blocking, so a backend too busy to accept (full backlog) fails us at once
        // (EAGAIN) instead of stalling the command.
        socket.set_nonblocking(true).map_err(io)?;
        match socket.connect(&addr) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
                ) =>
            {
                return Err(not_running())
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(ServiceError::Disconnected(
                    "the backend is not accepting connections".into(),
                ))
            }
            Err(e) => return Err(io(e)),
        }
        socket.set_nonblocking(false).map_err(io)?;
        let stream: UnixStream = socket.into();
        let mut client = Client {
            reader: BufReader::new(stream),
            socket: path.into(),
            next_id: 1,
            model: None,
        };
        client.set_timeout(Some(DEFAULT_TIMEOUT))?;
        Ok(client)
    }

    /// How long to wait for each answer (`None`: forever; a full reindex may take minutes).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<(), ServiceError> {
        let stream = self.reader.get_ref();
        stream
            .set_read_timeout(timeout)
            .map_err(|e| ServiceError::io(&self.socket, e))?;
        stream
            .set_write_timeout(timeout)
            .map_err(|e| ServiceError::io(&self.socket, e))
    }

    /// The socket this client is connected to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends one request and waits for its answer.
    pub fn request(&mut self, op: Op) -> Result<Reply, ServiceError> {
        let timeout = timeout_for(&op);
        self.set_timeout(timeout)?;
        let id = self.next_id;
        self.next_id += 1;
        let mut line = serde_json::to_vec(&Request {
            v: PROTOCOL_VERSION,
            id: Some(id),
            client_model: self.model.clone(),
            op,
        })
        .map_err(|e| ServiceError::Protocol(format!("request could not be encoded: {e}")))?;
        line.push(b'\n');
        if line.len() > MAX_LINE_BYTES {
            // The backend would close the connection on it mid-write.
            return Err(ServiceError::TooLarge(line.len()));
        }
        let gone = |e: std::io::Error| {
            ServiceError::Disconnected(match (e.kind(), timeout) {
                // What a read timeout looks like (EAGAIN): the OS's words would not say it.
                (std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut, Some(t)) => {
                    format!("no answer within {} s", t.as_secs())
                }
                _ => e.to_string(),
            })
        };
        // A backend that refused the connection (every client slot taken) wrote why and
        // closed it, maybe before this request went out: the write then fails, and the
        // reason is still there to read.
        let unsent = match self.reader.get_mut().write_all(&line) {
            Ok(()) => None,
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                Some(e)
            }
            Err(e) => return Err(gone(e)),
        };
        let mut answer = Vec::new();
        let read = self.reader.read_until(b'\n', &mut answer);
        let whole = matches!(read, Ok(n) if n > 0) && answer.last() == Some(&b'\n');
        match (whole, unsent, read) {
            (true, _, _) => {}
            (false, Some(e), _) => return Err(gone(e)),
            (false, None, Err(e)) => return Err(gone(e)),
            (false, None, Ok(_)) => {
                return Err(ServiceError::Disconnected(
                    "connection closed before a whole answer".into(),
                ))
            }
        }
        let response: Response = match serde_json::from_slice(&answer) {
            Ok(r) => r,
            Err(e) => {
                // An older or newer backend may shape its answers differently; its version
                // says which, when even that much can be read.
                let v = serde_json::from_slice::<serde_json::Value>(&answer)
                    .ok()
                    .and_then(|j| j["v"].as_u64());
                return Err(match v {
                    Some(v) if v != u64::from(PROTOCOL_VERSION) => ServiceError::VersionMismatch {
                        theirs: v as u32,
                        ours: PROTOCOL_VERSION,
                    },
                    _ => ServiceError::Protocol(e.to_string()),
                });
            }
        };
        if response.v != PROTOCOL_VERSION {
            return Err(ServiceError::VersionMismatch {
                theirs: response.v,
                ours: PROTOCOL_VERSION,
            });
        }
        match (response.id, response.outcome) {
            (Some(got), Outcome::Result(reply)) if got == id => Ok(reply),
            (Some(got), Outcome::Error(fault)) if got == id => Err(ServiceError::Remote(fault)),
            // An error for no request: the connection itself was refused before any was
            // read (a backend with every client slot taken says it is busy so).
            (None, Outcome::Error(fault)) => Err(ServiceError::Remote(fault)),
            (got, _) => Err(ServiceError::Protocol(format!(
                "answer to request {got:?}, expected {id}"
            ))),
        }
    }

    /// Sends `op` and returns its answer as the payload type that answers it.
    pub fn ask<T: Answer>(&mut self, op: Op) -> Result<T, ServiceError> {
        expect(self.request(op)?)
    }

    /// Who is serving.
    pub fn hello(&mut self) -> Result<ServerInfo, ServiceError> {
        self.ask(Op::Hello)
    }

    /// Runs a search on the backend.
    pub fn search(&mut self, req: &SearchRequest) -> Result<SearchResponse, ServiceError> {
        self.ask(Op::Search(req.clone()))
    }

    /// The backend's `brain status`, its own section included.
    pub fn status(&mut self) -> Result<StatusReport, ServiceError> {
        self.ask::<Box<StatusReport>>(Op::Status).map(|s| *s)
    }

    /// Asks for a sync now and waits for it (no timeout: a full one may take minutes).
    pub fn reindex(&mut self, full: bool) -> Result<SyncReport, ServiceError> {
        self.ask::<Box<SyncReport>>(Op::Reindex { full })
            .map(|r| *r)
    }

    /// A note's text, or some of its lines.
    pub fn get(&mut self, req: &NoteRef) -> Result<Passage, ServiceError> {
        self.ask(Op::Get(req.clone()))
    }
}
