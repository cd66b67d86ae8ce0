//! The wire protocol: one JSON object per line each way (UTF-8, `\n`-terminated), answered
//! in order. Every request names the protocol version it speaks; every response carries the
//! backend's, so either side can tell when the other is from another release.
//!
//! ```text
//! > {"v":1,"id":1,"op":"search","query":"flag cleanup","top":3}
//! < {"v":1,"id":1,"result":{"search":{"query":"flag cleanup","mode":"bm25","results":[...],"recall_id":7}}}
//! > {"v":1,"op":"get","path":"lore/x.md","line":10,"count":5}
//! < {"v":1,"result":{"get":{"path":"lore/x.md","abs_path":"/home/me/.brain/lore/x.md","start_line":10,"end_line":14,...}}}
//! > hello?
//! < {"v":1,"error":{"code":"bad_request","message":"request is not JSON: expected value at line 1 column 1","exit":2}}
//! ```
//!
//! The payloads are the library's own types, the same ones `--json` prints.

use serde::{Deserialize, Serialize};

use super::state::BackendStatus;
use crate::engine::Status;
use crate::error::Error;
use crate::index::SyncReport;
use crate::kb::{CheckReport, IndexFile, LinksReport};
use crate::passage::{NoteRef, Passage};
use crate::search::{SearchRequest, SearchResponse};
use crate::similar::{ClustersResponse, SimilarRequest, SimilarResponse};

/// The protocol version this build speaks. Bump it on any change an older peer would
/// misread; adding an optional field is not such a change.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request line accepted, in bytes (newline excluded). A longer one gets a
/// `too_large` error and its connection is closed: the rest of it cannot be framed.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// A request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The protocol version the client speaks.
    pub v: u32,
    /// Echoed in the response, for clients that pipeline requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The model the client's own settings name ([`crate::Config::model_label`]). A
    /// backend that embeds with another answers [`ErrorCode::OtherSettings`] instead of
    /// answering with its model where the client's was asked for; a client that does not
    /// say is answered as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_model: Option<String>,
    /// What is asked.
    #[serde(flatten)]
    pub op: Op,
}

/// What a client can ask, tagged by `"op"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Who is serving: versions, pid, root. Cheap; a liveness probe.
    Hello,
    /// A search; the fields are those of [`SearchRequest`].
    Search(SearchRequest),
    /// `brain status`, with the backend's own section filled in.
    Status,
    /// Sync the index with the folder now and answer when done.
    Reindex {
        /// Re-read and rewrite every note, not only the changed ones.
        #[serde(default)]
        full: bool,
    },
    /// A note's text, or some of its lines; the fields are those of [`NoteRef`].
    Get(NoteRef),
    /// The notes most like a draft or a note; the fields are those of [`SimilarRequest`].
    Similar(SimilarRequest),
    /// Clusters of notes that duplicate each other.
    SimilarAll {
        /// Sync with the folder first.
        #[serde(default)]
        sync: bool,
    },
    /// `brain check`: what is broken or stale in the knowledge base.
    Check {
        /// Sync with the folder first.
        #[serde(default = "yes")]
        sync: bool,
    },
    /// Each typed folder's INDEX.md as generated, with the file as it is.
    IndexMd {
        /// Sync with the folder first.
        #[serde(default = "yes")]
        sync: bool,
    },
    /// A note the client has just written (`brain new`, the panel's capture): synced now,
    /// so that the next request sees it without waiting for the watcher. Answered with the
    /// sync's report.
    Saved {
        /// The note, relative to the root.
        path: String,
    },
    /// The links from and to one note.
    Links {
        /// The note, relative to the root.
        path: String,
        /// Sync with the folder first.
        #[serde(default = "yes")]
        sync: bool,
    },
}

fn yes() -> bool {
    true
}

/// A response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The protocol version the backend speaks.
    pub v: u32,
    /// The request's `id`, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// `"result"` or `"error"`.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// How a request went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It worked.
    Result(Reply),
    /// It did not.
    Error(Fault),
}

/// A successful answer, keyed by the op that asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// Answer to [`Op::Hello`].
    Hello(ServerInfo),
    /// Answer to [`Op::Search`].
    Search(SearchResponse),
    /// Answer to [`Op::Status`].
    Status(Box<StatusReport>),
    /// Answer to [`Op::Reindex`].
    Reindex(Box<SyncReport>),
    /// Answer to [`Op::Get`].
    Get(Passage),
    /// Answer to [`Op::Similar`] (boxed, as `Status`: the largest reply).
    Similar(Box<SimilarResponse>),
    /// Answer to [`Op::SimilarAll`].
    SimilarAll(ClustersResponse),
    /// Answer to [`Op::Check`].
    Check(CheckReport),
    /// Answer to [`Op::IndexMd`].
    IndexMd(Vec<IndexFile>),
    /// Answer to [`Op::Links`].
    Links(LinksReport),
}

impl Reply {
    /// The op this reply answers, for messages about a mismatch.
    pub fn op(&self) -> &'static str {
        match self {
            Reply::Hello(_) => "hello",
            Reply::Search(_) => "search",
            Reply::Status(_) => "status",
            Reply::Reindex(_) => "reindex",
            Reply::Get(_) => "get",
            Reply::Similar(_) => "similar",
            Reply::SimilarAll(_) => "similar_all",
            Reply::Check(_) => "check",
            Reply::IndexMd(_) => "index_md",
            Reply::Links(_) => "links",
        }
    }
}

/// `brain status`: what the engine knows, and the backend's own section when a backend
/// answered (`null` when the status was read in-process). `--json` prints this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Counts, paths, the last sync, the model.
    #[serde(flatten)]
    pub status: Status,
    /// The warm backend that answered, if one did.
    #[serde(default)]
    pub backend: Option<BackendStatus>,
}

/// A reply payload that answers one op: lets a caller ask for the type it wants and get a
/// clear error when the backend answered something else.
pub trait Answer: Sized {
    /// The op this payload answers.
    const OP: &'static str;
    /// The payload, or the reply back when it answers another op.
    fn from_reply(reply: Reply) -> Result<Self, Reply>;
}

macro_rules! answers {
    ($($variant:ident($ty:ty) => $op:literal),* $(,)?) => {$(
        impl Answer for $ty {
            const OP: &'static str = $op;
            fn from_reply(reply: Reply) -> Result<Self, Reply> {
                match reply {
                    Reply::$variant(x) => Ok(x),
                    other => Err(other),
                }
            }
        }
    )*};
}

answers! {
    Hello(ServerInfo) => "hello",
    Search(SearchResponse) => "search",
    Status(Box<StatusReport>) => "status",
    Reindex(Box<SyncReport>) => "reindex",
    Get(Passage) => "get",
    Similar(Box<SimilarResponse>) => "similar",
    SimilarAll(ClustersResponse) => "similar_all",
    Check(CheckReport) => "check",
    IndexMd(Vec<IndexFile>) => "index_md",
    Links(LinksReport) => "links",
}

/// The payload of `reply` as the type that answers `T::OP`, or a protocol error naming
/// what was asked and what came back.
pub(crate) fn expect<T: Answer>(reply: Reply) -> Result<T, super::ServiceError> {
    T::from_reply(reply).map_err(|other| {
        super::ServiceError::Protocol(format!(
            "asked for {}, got an answer to {}",
            T::OP,
            other.op()
        ))
    })
}

/// Who is serving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// brain's version (the crate version).
    pub version: String,
    /// The protocol version.
    pub protocol: u32,
    /// The backend's process id.
    pub pid: u32,
    /// The brain folder it serves.
    pub root: String,
    /// Unix seconds when it started.
    pub started_at: i64,
}

/// An error answer: a stable code for programs, one line for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// What kind of failure.
    pub code: ErrorCode,
    /// One line saying what went wrong, worded like the in-process error.
    pub message: String,
    /// The exit status a command-line client should end with (1 failure, 2 bad input).
    #[serde(default = "one")]
    pub exit: u8,
}

fn one() -> u8 {
    1
}

/// Stable error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The line is not a request (not JSON, unknown op, wrong field types).
    BadRequest,
    /// The line is longer than [`MAX_LINE_BYTES`].
    TooLarge,
    /// The request's `v` is not a version this backend speaks.
    UnsupportedVersion,
    /// Too many clients are connected; try again or work in-process.
    Busy,
    /// The backend is stopping.
    ShuttingDown,
    /// The request is well formed but cannot be done as asked (empty query, bad path...).
    InvalidInput,
    /// The client's settings name another model than the backend embeds with: the client
    /// works in-process, with its own.
    OtherSettings,
    /// The brain folder is missing or unreadable.
    RootMissing,
    /// The configuration is invalid.
    Config,
    /// The model is missing or failed verification or inference.
    Model,
    /// The index or the file system failed.
    Storage,
    /// Anything else.
    Internal,
}

impl Fault {
    /// A fault with exit status 1.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
            exit: 1,
        }
    }

    /// A malformed request (exit status 2).
    pub fn bad_request(message: impl Into<String>) -> Fault {
        Fault {
            code: ErrorCode::BadRequest,
            message: message.into(),
            exit: 2,
        }
    }
}

impl From<&Error> for Fault {
    fn from(e: &Error) -> Fault {
        let code = match e {
            Error::InvalidInput(_) => ErrorCode::InvalidInput,
            Error::RootMissing { .. } | Error::RootUnreadable { .. } => ErrorCode::RootMissing,
            Error::Config(_) => ErrorCode::Config,
            Error::Model(_) | Error::Embed(_) => ErrorCode::Model,
            Error::Cancelled => ErrorCode::ShuttingDown,
            // The index and file-system errors, and any added later.
            _ => ErrorCode::Storage,
        };
        Fault {
            code,
            message: chain(e),
            exit: e.exit_code().clamp(0, 255) as u8,
        }
    }
}

/// An error and its sources on one line, joined by `": "`: what `anyhow` prints for `{:#}`,
/// so a client printing `error: {message}` matches the in-process output byte for byte.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

impl Response {
    /// A success.
    pub fn ok(id: Option<u64>, reply: Reply) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            id,
            outcome: Outcome::Result(reply),
        }
    }

    /// A failure.
    pub fn err(id: Option<u64>, fault: Fault) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            id,
            outcome: Outcome::Error(fault),
        }
    }

    /// The response as one line, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_else(|e| {
            // Only a non-string map key or a failing Serialize impl gets here; say so in-band.
            let fault = Fault::new(
                ErrorCode::Internal,
                format!("response could not be encoded: {e}"),
            );
            serde_json::to_vec(&Response::err(self.id, fault)).unwrap_or_default()
        });
        line.push(b'\n');
        line
    }
}

/// Parses one request line. A line that is not a request, or speaks another version,
/// becomes the error response to send back (with the request's `id` when it could be read).
pub fn parse_request(line: &[u8]) -> Result<Request, Box<Response>> {
    #[derive(Deserialize)]
    struct Head {
        v: Option<u32>,
        id: Option<u64>,
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        Box::new(Response::err(
            None,
            Fault::bad_request(format!("request is not UTF-8: {e}")),
        ))
    })?;
    let head: Head = serde_json::from_str(text).map_err(|e| {
        Box::new(Response::err(
            None,
            Fault::bad_request(format!("request is not a JSON object: {e}")),
        ))
    })?;
    match head.v {
        Some(PROTOCOL_VERSION) => {}
        Some(v) => {
            let msg = format!(
                "protocol version {v} is not spoken here; this backend speaks {PROTOCOL_VERSION}"
            );
            return Err(Box::new(Response::err(
                head.id,
                Fault::new(ErrorCode::UnsupportedVersion, msg),
            )));
        }
        None => {
            let msg = format!("request has no protocol version: add \"v\":{PROTOCOL_VERSION}");
            return Err(Box::new(Response::err(head.id, Fault::bad_request(msg))));
        }
    }
    serde_json::from_str(text).map_err(|e| {
        Box::new(Response::err(
            head.id,
            Fault::bad_request(format!("bad request: {e}")),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Mode;

    #[test]
    fn requests_read_as_documented() {
        let r = parse_request(
            br#"{"v":1,"id":4,"op":"search","query":"flag cleanup","top":3,"type":"lore"}"#,
        )
        .unwrap();
        let Op::Search(s) = &r.op else {
            panic!("{r:?}")
        };
        assert_eq!(
            (r.id, s.query.as_str(), s.top, s.mode),
            (Some(4), "flag cleanup", 3, Mode::Hybrid)
        );
        assert_eq!(s.filters.kind.as_deref(), Some("lore"));
        assert!(s.sync, "sync defaults to true, as on the command line");
        let r = parse_request(br#"{"v":1,"op":"reindex"}"#).unwrap();
        assert_eq!(r.op, Op::Reindex { full: false });
        let r = parse_request(br#"{"v":1,"op":"get","path":"a.md","line":3}"#).unwrap();
        assert_eq!(
            r.op,
            Op::Get(NoteRef {
                path: "a.md".into(),
                line: Some(3),
                count: None
            })
        );
    }

    #[test]
    fn requests_round_trip() {
        for op in [
            Op::Hello,
            Op::Status,
            Op::Reindex { full: true },
            Op::Search(SearchRequest::new("x")),
            Op::Search(SearchRequest {
                as_you_type: true,
                ..SearchRequest::new("x")
            }),
        ] {
            let req = Request {
                v: PROTOCOL_VERSION,
                id: Some(9),
                client_model: Some("all-minilm-l6-v2".into()),
                op,
            };
            let line = serde_json::to_vec(&req).unwrap();
            assert_eq!(parse_request(&line).unwrap(), req);
        }
    }

    #[test]
    fn bad_lines_become_error_responses() {
        let cases: [(&[u8], ErrorCode, &str); 6] = [
            (b"hello?", ErrorCode::BadRequest, "not a JSON object"),
            (b"\xff\xfe", ErrorCode::BadRequest, "not UTF-8"),
            (
                br#"{"op":"hello"}"#,
                ErrorCode::BadRequest,
                "no protocol version",
            ),
            (
                br#"{"v":2,"id":5,"op":"hello"}"#,
                ErrorCode::UnsupportedVersion,
                "speaks 1",
            ),
            (
                br#"{"v":1,"op":"launch"}"#,
                ErrorCode::BadRequest,
                "unknown variant",
            ),
            (
                br#"{"v":1,"op":"search","query":7}"#,
                ErrorCode::BadRequest,
                "invalid type",
            ),
        ];
        for (line, code, words) in cases {
            let resp = parse_request(line).unwrap_err();
            let Outcome::Error(f) = &resp.outcome else {
                panic!()
            };
            assert_eq!(f.code, code, "{}", f.message);
            assert!(f.message.contains(words), "{}", f.message);
        }
        let resp = parse_request(br#"{"v":2,"id":5,"op":"hello"}"#).unwrap_err();
        assert_eq!(resp.id, Some(5));
    }

    #[test]
    fn responses_are_one_line_and_round_trip() {
        let resp = Response::err(
            Some(1),
            Fault::from(&Error::InvalidInput("empty query".into())),
        );
        let line = resp.to_line();
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(
            line.starts_with(br#"{"v":1,"id":1,"error":{"code":"invalid_input""#),
            "{}",
            String::from_utf8_lossy(&line)
        );
        assert_eq!(serde_json::from_slice::<Response>(&line).unwrap(), resp);
        let hello = Response::ok(None, Reply::Reindex(Box::default()));
        assert_eq!(
            serde_json::from_slice::<Response>(&hello.to_line()).unwrap(),
            hello
        );
    }

    #[test]
    fn faults_keep_the_cli_exit_codes() {
        assert_eq!(Fault::from(&Error::InvalidInput("x".into())).exit, 2);
        assert_eq!(Fault::from(&Error::Embed("x".into())).exit, 1);
    }
}
