//! The MCP tools (`search`, `get`, `similar`, `status`, `check`, `links`): their argument schemas, their
//! descriptions (what the assistant reads to decide when to call them), and the calls into
//! the [`Answerer`] (the warm backend when one runs, in-process otherwise; asked afresh on
//! every call, so a backend started or stopped mid-session is picked up or left).
//!
//! Every failure, a bad argument or a broken index alike, comes back as a tool result with
//! `isError: true` and one line saying what to change: the assistant can read and correct
//! it, whereas a JSON-RPC error would be shown to it as an opaque failure.

use std::path::Path;
use std::sync::Arc;

use brain::passage::NoteRef;
use brain::search::{Filters, Mode, SearchRequest, DEFAULT_TOP};
use brain::similar::{SimilarRequest, Source};
use brain::Answerer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::render;

/// How to rank, as the tools' schema spells it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum ModeArg {
    #[default]
    Hybrid,
    Bm25,
    Semantic,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Hybrid => Mode::Hybrid,
            ModeArg::Bm25 => Mode::Bm25,
            ModeArg::Semantic => Mode::Semantic,
        }
    }
}

/// `value`, unless it is empty or blank: an optional argument left out.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

fn default_top() -> u32 {
    DEFAULT_TOP as u32
}

/// `null` as the argument left out: assistants send it for the optional arguments they do
/// not set, and `mode: null` was refused where `type: null` was taken.
fn null_or<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// [`null_or`] for search's `top`, whose default is not 0.
fn null_or_default_top<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(whole(d)?.unwrap_or_else(default_top))
}

/// [`null_or`] for similar's `top`.
fn null_or_default_similar_top<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(whole(d)?.unwrap_or_else(default_similar_top))
}

/// A count or a line number: a whole number, also when written `5.0` (JSON has one kind
/// of number, JSON Schema's `integer` allows it, and a Python client sends it so); `null`
/// is none. Too large and below zero are said as such.
fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::{Error, Unexpected};
    let value = serde_json::Value::deserialize(d)?;
    let n = match value {
        serde_json::Value::Null => return Ok(None),
        serde_json::Value::Number(n) => n,
        serde_json::Value::Bool(b) => {
            return Err(D::Error::invalid_type(
                Unexpected::Bool(b),
                &"a whole number",
            ))
        }
        serde_json::Value::String(s) => {
            return Err(D::Error::invalid_type(
                Unexpected::Str(&s),
                &"a whole number",
            ))
        }
        serde_json::Value::Array(_) => {
            return Err(D::Error::invalid_type(Unexpected::Seq, &"a whole number"))
        }
        serde_json::Value::Object(_) => {
            return Err(D::Error::invalid_type(Unexpected::Map, &"a whole number"))
        }
    };
    if let Some(u) = n.as_u64() {
        return u32::try_from(u).map(Some).map_err(|_| {
            D::Error::invalid_value(Unexpected::Unsigned(u), &"a whole number up to 4294967295")
        });
    }
    if let Some(i) = n.as_i64() {
        return Err(D::Error::invalid_value(
            Unexpected::Signed(i),
            &"a whole number of 1 or more",
        ));
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => {
            Ok(Some(f as u32))
        }
        Some(f) if f < 0.0 => Err(D::Error::invalid_value(
            Unexpected::Float(f),
            &"a whole number of 1 or more",
        )),
        Some(f) => Err(D::Error::invalid_value(
            Unexpected::Float(f),
            &"a whole number",
        )),
        None => Err(D::Error::custom("expected a whole number")),
    }
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for. Names, identifiers and error strings as keywords
    /// (`wal_checkpoint busy_timeout`); ideas as a plain sentence ("why do retries make
    /// outages worse"). Also: "exact phrase", -exclude (flags such as -xzf or --release are
    /// searched for; quote a short word to exclude it: -"herd"), prefix*.
    pub query: String,
    /// hybrid (keywords and meaning fused; the default), bm25 (keywords only: exact names)
    /// or semantic (meaning only).
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<ModeArg>")]
    pub mode: ModeArg,
    /// How many results, 1 to 100.
    #[serde(default = "default_top", deserialize_with = "null_or_default_top")]
    #[schemars(with = "Option<u32>", range(min = 1, max = 100))]
    pub top: u32,
    /// Only notes of this type: lore, idea, research-link, or any other top-level folder.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// Only notes with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only notes dated on or after: `30d`, `2w` or `YYYY-MM-DD` (the note's `updated`,
    /// else `created`, else a date in its file name, else its modification day).
    #[serde(default)]
    pub since: Option<String>,
    /// Only notes dated before: `30d`, `2w` or `YYYY-MM-DD`.
    #[serde(default)]
    pub before: Option<String>,
    /// Frontmatter conditions, all of which must hold: `FIELD=VALUE` (the field is the
    /// value, or a list holding it) or `FIELD!=VALUE`, e.g. `["category=lesson",
    /// "status!=deprecated"]`.
    #[serde(rename = "where", default, deserialize_with = "null_or")]
    #[schemars(with = "Option<Vec<String>>")]
    pub conditions: Vec<String>,
    /// Answer with the JSON object `brain search --json` prints instead of text.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

/// Arguments of `get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// The note's path as search results give it (relative to the brain folder), an
    /// absolute path inside the brain folder, or a link copied from a note: `[[lore/x]]`,
    /// and `[[lore/x#Heading]]` for that heading's section.
    pub path: String,
    /// 1-based line to show, e.g. a search hit's line. Without `count`: 20 lines, starting
    /// 5 before it (more near the note's end, so that as many show). Without `line`: the
    /// whole note, up to 400 lines.
    #[serde(default, deserialize_with = "whole")]
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// How many lines to show, starting at `line` (or at the top).
    #[serde(default, deserialize_with = "whole")]
    #[schemars(range(min = 1))]
    pub count: Option<u32>,
    /// Answer with the JSON object `brain get --json` prints instead of numbered lines.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

/// Arguments of `similar`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarArgs {
    /// The draft to check, as markdown (frontmatter allowed). Give this or `path`.
    #[serde(default)]
    pub text: Option<String>,
    /// A note of the brain (relative to the brain folder, or absolute inside it): the notes
    /// most like it, itself excluded.
    #[serde(default)]
    pub path: Option<String>,
    /// How many notes, 1 to 50.
    #[serde(
        default = "default_similar_top",
        deserialize_with = "null_or_default_similar_top"
    )]
    #[schemars(with = "Option<u32>", range(min = 1, max = 50))]
    pub top: u32,
    /// Answer with the JSON object `brain similar --json` prints instead of text.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

/// Arguments of `check`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// Answer with the JSON object `brain check --json` prints instead of text.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

/// Arguments of `status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// Answer with the JSON object `brain status --json` prints instead of text.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

/// Arguments of `links`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinksArgs {
    /// The note, as search results give it (relative to the brain folder).
    pub path: String,
    /// Answer with the JSON object `brain links --json` prints instead of text.
    #[serde(default, deserialize_with = "null_or")]
    #[schemars(with = "Option<bool>")]
    pub json: bool,
}

const CHECK: &str = "Audit the user's brain: broken or short-form [[links]], entries missing a required field or holding a value their type's SCHEMA.md does not allow, a type that disagrees with its folder, slugs that are not kebab-case or taken twice, bad or backwards dates, stale entries, INDEX.md files out of date, unreadable frontmatter. Each problem names the file and line. Read-only.";

const LINKS: &str = "The [[links]] of one note of the user's brain, both ways: the notes it links to (broken ones marked, with why) and the notes that link to it, each with its line.";

fn default_similar_top() -> u32 {
    5
}

const SIMILAR: &str = "Before writing a new note into the user's brain, check the draft: pass its markdown as `text`. The first line is the verdict: `duplicate of PATH` (do not write it: edit that note instead), `related to N notes` (write it, and link the related ones), or `new: nothing like it`. Each candidate has its own verdict and a reason (how their passages align, the rare words they share). With `path`, lists the notes most like an existing note.";

const SEARCH: &str = "Search the user's notes (their \"brain\": markdown notes of hard-won \
lessons, ideas and research links) by keywords and meaning. Call it early, whenever the \
conversation touches something the user may have written down before, and before writing a \
new note (update the existing one instead of writing a duplicate). Each hit shows \
path:line, the title, why it matched (fused=score, higher is better; bm25=#rank in the \
keyword list, sem=#rank in the meaning list, '-' when that list did not find it) and the \
matching passage with matched words in «marks». Read more of a hit with `get`.";

const GET: &str = "Read a note from the user's brain with line numbers: pass a search hit's \
path and line to see the passage around it, add count for a longer stretch, or omit line \
for the whole note (up to 400 lines; the answer says how to read on). A link copied from a \
note names its note too: [[lore/x]], and [[lore/x#Heading]] for that heading's section. Only \
notes inside the brain folder can be read.";

const STATUS: &str = "What the user's brain holds: its folder, notes per type, when the index \
last synced, and whether semantic search (the embedding model) is installed.";

/// The MCP server: the tools over one [`Answerer`].
#[derive(Clone)]
pub struct BrainTools {
    brain: Arc<Answerer>,
    tool_router: ToolRouter<BrainTools>,
    in_flight: Arc<super::in_flight::InFlight>,
}

impl BrainTools {
    /// Tools answering from `brain`.
    pub fn new(brain: Answerer) -> BrainTools {
        BrainTools {
            brain: Arc::new(brain),
            tool_router: Self::tool_router(),
            in_flight: Arc::default(),
        }
    }

    /// The calls these tools are answering, which the end of stdin waits for.
    pub fn in_flight(&self) -> Arc<super::in_flight::InFlight> {
        self.in_flight.clone()
    }

    /// Runs blocking engine work off the protocol task, so a slow search never stalls
    /// pings or cancellations; a panic in it becomes a tool error, not a dead server.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Answerer) -> Result<T, brain::service::ServiceError> + Send + 'static,
    ) -> Result<T, String> {
        let brain = self.brain.clone();
        match tokio::task::spawn_blocking(move || work(&brain)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(format!("{:#}", anyhow::Error::from(e))),
            Err(e) => Err(format!("internal error: {e}")),
        }
    }
}

#[tool_router]
impl BrainTools {
    #[tool(
        description = SEARCH,
        annotations(title = "Search notes", read_only_hint = true, open_world_hint = false)
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        if args.top == 0 || args.top > MCP_MAX_TOP {
            return failure(format!(
                "{}, got {}",
                top_range(MCP_MAX_TOP as usize),
                args.top
            ));
        }
        let request = SearchRequest {
            query: args.query,
            mode: args.mode.into(),
            top: args.top as usize,
            // An empty filter is one left out, as `null` is: assistants fill the optional
            // arguments they do not set with either, and `type: ""` matched no note.
            filters: Filters {
                kind: given(args.kind),
                tag: given(args.tag),
                since: given(args.since),
                before: given(args.before),
                conditions: args.conditions,
            },
            sync: true,
            explain: false,
            as_you_type: false,
        };
        let root = self.brain.config().root.clone();
        match self.blocking(move |b| b.search(&request)).await {
            Ok(response) if args.json => json(&response),
            Ok(response) => success(render::search(&response, &root)),
            Err(message) => failure(as_arguments(&message)),
        }
    }

    #[tool(
        description = GET,
        annotations(title = "Read a note", read_only_hint = true, open_world_hint = false)
    )]
    async fn get(&self, Parameters(args): Parameters<GetArgs>) -> CallToolResult {
        let note = match note_ref(&self.brain.config().root, &args) {
            Ok(note) => note,
            Err(message) => return failure(message),
        };
        let wanted = note.line;
        let read = move |b: &Answerer| {
            let passage = b.get(&note)?;
            crate::cli::stats::record_read(b.config(), &passage.path, brain::usage::Via::Mcp);
            Ok(passage)
        };
        match self.blocking(read).await {
            Ok(passage) => {
                let (passage, more) = cap(passage, wanted);
                if args.json {
                    // The read-on line too, as `"notice"`, as the CLI's objects carry theirs.
                    let mut object = serde_json::to_value(&passage).unwrap_or_default();
                    if let (Some(more), Some(fields)) = (&more, object.as_object_mut()) {
                        fields.insert("notice".into(), more.clone().into());
                    }
                    return json(&object);
                }
                let mut text = render::passage(&passage);
                if let Some(more) = more {
                    text.push_str(&format!("note: {more}\n"));
                }
                success(text)
            }
            Err(message) => failure(message),
        }
    }

    #[tool(
        description = SIMILAR,
        annotations(title = "Did I already write this?", read_only_hint = true, open_world_hint = false)
    )]
    async fn similar(&self, Parameters(args): Parameters<SimilarArgs>) -> CallToolResult {
        if args.top == 0 || args.top as usize > brain::similar::MAX_TOP {
            return failure(format!(
                "{}, got {}",
                top_range(brain::similar::MAX_TOP),
                args.top
            ));
        }
        let root = self.brain.config().root.clone();
        let source = match (args.text, args.path) {
            (Some(text), None) => Source::Text(text),
            (None, Some(path)) => match brain::passage::note_rel(&root, &path) {
                Ok(rel) => Source::Path(rel),
                Err(e) => return failure(format!("{e}: pass its text as `text`")),
            },
            _ => return failure("pass exactly one of `text` (a draft) or `path` (a note)".into()),
        };
        let request = SimilarRequest {
            source,
            top: args.top as usize,
            explain: false,
            sync: true,
        };
        match self.blocking(move |b| b.similar(&request)).await {
            Ok(response) if args.json => json(&response),
            Ok(response) => {
                let mut out = Vec::new();
                let _ =
                    crate::cli::print::similar(&mut out, &response, crate::cli::paint::Paint::OFF);
                let mut text = String::from_utf8_lossy(&out).into_owned();
                if let Some(n) = &response.notice {
                    text.push_str(&format!("\n(note: {n})"));
                }
                // "Edit that note instead": where it is, as a search's answer says.
                text.push_str(&format!("\n(notes in {})", root.display()));
                success(text)
            }
            Err(message) => failure(message),
        }
    }

    #[tool(
        description = CHECK,
        annotations(title = "Audit the brain", read_only_hint = true, open_world_hint = false)
    )]
    async fn check(&self, Parameters(args): Parameters<CheckArgs>) -> CallToolResult {
        match self.blocking(|b| b.check()).await.map(capped) {
            Ok(report) if args.json => json(&report),
            Ok(report) => success(render::check(&report)),
            Err(message) => failure(message),
        }
    }

    #[tool(
        description = LINKS,
        annotations(title = "Links of a note", read_only_hint = true, open_world_hint = false)
    )]
    async fn links(&self, Parameters(args): Parameters<LinksArgs>) -> CallToolResult {
        // As `similar` and the CLI take it: an absolute path, `..`, a hit's `path:LINE`.
        let path = match brain::passage::note_rel(&self.brain.config().root, &args.path) {
            Ok(rel) => rel,
            Err(e) => return failure(e.to_string()),
        };
        match self.blocking(move |b| b.links(&path)).await {
            Ok(report) if args.json => json(&links_capped(report)),
            Ok(report) => success(render::links(&links_capped(report))),
            Err(message) => failure(message),
        }
    }

    #[tool(
        description = STATUS,
        annotations(title = "Brain status", read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self, Parameters(args): Parameters<StatusArgs>) -> CallToolResult {
        let ours = self.brain.config().model.clone();
        let asks = self.brain.asks_backend();
        let socket = brain::service::socket_path(self.brain.config());
        let holder = brain::service::backend_holder(self.brain.config());
        match self.blocking(|b| b.status()).await {
            Ok(status) => {
                // As `brain status` says it: not asked (`brain mcp --no-daemon`) is not
                // "not running". Why a backend there was not used went to this server's
                // log, which the model never reads: the answer says it.
                let told = self.brain.left_alone_because();
                let why = crate::cli::status::why_none(&status, asks, None, socket, holder);
                if args.json {
                    return json(&crate::cli::status::with_state(&status, why, told));
                }
                let mut text = render::status(&status, why, told.as_deref());
                if let Some(note) = crate::cli::status::model_mismatch(&status, &ours) {
                    text.push_str(&format!("\n(note: {note})"));
                }
                success(text)
            }
            Err(message) => failure(message),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BrainTools {
    /// Checks the arguments first, to name the bad one: rmcp's own refusal ("failed to
    /// deserialize parameters: invalid value: integer `-1`, expected u32") said neither which
    /// argument nor what it takes.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _running = self.in_flight.begin();
        // Read where they lie: a draft for `similar` may be megabytes.
        let none = serde_json::Map::new();
        let given = request.arguments.as_ref().unwrap_or(&none);
        if let Some(message) = argument_error(&request.name, given) {
            return Ok(failure(message).into());
        }
        let call = ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("brain", env!("CARGO_PKG_VERSION"))
                    .with_title("brain: the user's notes")
                    .with_description("Local hybrid search over a folder of markdown notes"),
            )
            .with_instructions(format!(
                "The user's notes live in {}. Search them (tool `search`) before answering from \
                 general knowledge about anything they may have written down; read a hit's \
                 passage with `get`; before writing a new note, check the draft with `similar`.",
                self.brain.config().root.display()
            ))
    }
}

/// Lines `get` answers when asked for a whole note: an assistant that reads "the note"
/// gets its head and the way to the rest, not a 10 MB file in its context.
const WHOLE_NOTE_LINES: u32 = 400;

/// The most results one MCP search returns: 1,000 hits (the CLI's most) came to about
/// 80 kB of text, past what an assistant's tool output is allowed (Claude Code's default is
/// 25k tokens); a hundred are about 8 kB.
const MCP_MAX_TOP: u32 = 100;

/// Bytes of note text one `get` answer holds at most, whatever `count` asked for (a
/// minified line can be megabytes long, so lines alone do not bound it).
const MAX_CHARS: usize = 40_000;

/// Problems a `check` answer lists at most: a brain of thousands of notes whose schema
/// changed has thousands, past what an assistant can read in one answer; the counts per
/// kind still cover them all.
const CHECK_MAX_PROBLEMS: usize = 100;

/// Links a `links` answer lists at most each way: a map of content links thousands of
/// notes, and a daily-note hub is linked from thousands (50,000 links made 5.6 MB).
const LINKS_MAX: usize = 200;

/// `report` with at most [`LINKS_MAX`] links each way, in their order, and a notice with
/// the counts of all (and of the broken ones, which the cut may hide).
fn links_capped(mut report: brain::kb::LinksReport) -> brain::kb::LinksReport {
    let (out, into) = (report.outgoing.len(), report.incoming.len());
    if out <= LINKS_MAX && into <= LINKS_MAX {
        return report;
    }
    let broken = report
        .outgoing
        .iter()
        .filter(|l| l.state == "broken")
        .count();
    report.outgoing.truncate(LINKS_MAX);
    report.incoming.truncate(LINKS_MAX);
    let cut = format!(
        "{} of {out} links from it ({broken} broken in all) and {} of {into} links to it listed; run `brain links {}` in a terminal for the whole list",
        report.outgoing.len(),
        report.incoming.len(),
        // Quoted: the assistant may run it, and a note's name may hold `$(...)`.
        crate::cli::install::shell_word(&report.path)
    );
    report.notice = Some(match report.notice.take() {
        Some(n) => format!("{n}; {cut}"),
        None => cut,
    });
    report
}

/// `report` with at most [`CHECK_MAX_PROBLEMS`] problems, taken from every kind in turn
/// (each kind shows some, in their order), and a notice saying how many more there are.
fn capped(mut report: brain::kb::CheckReport) -> brain::kb::CheckReport {
    // A message echoes a note's values whole (a 200,000-character `type:`).
    for p in &mut report.problems {
        p.message = crate::cli::long_words_cut(&p.message);
    }
    let total = report.problems.len();
    if total <= CHECK_MAX_PROBLEMS {
        return report;
    }
    // Each problem's place among those of its kind: the first of every kind come first,
    // then the second of every kind, and so on (the report lists kind by kind).
    let mut seen = std::collections::BTreeMap::new();
    let place: Vec<usize> = report
        .problems
        .iter()
        .map(|p| {
            let n = seen.entry(p.kind).or_insert(0);
            *n += 1;
            *n
        })
        .collect();
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| (place[i], i));
    let mut kept = vec![false; total];
    for &i in &order[..CHECK_MAX_PROBLEMS] {
        kept[i] = true;
    }
    let mut at = 0;
    report.problems.retain(|_| {
        at += 1;
        kept[at - 1]
    });
    let cut = format!(
        "{CHECK_MAX_PROBLEMS} of {total} problems listed, some of each kind (the counts are of all); run `brain check` in a terminal for the whole list, or fix these and check again"
    );
    report.notice = Some(match report.notice.take() {
        Some(n) => format!("{n}; {cut}"),
        None => cut,
    });
    report
}

/// `p` cut to [`MAX_CHARS`] bytes at a line's end (inside the first line when that alone is
/// longer), and what was left out, said as the call that reads on. The lines of context
/// before `wanted` (the line asked for) go first: a cut that left out the asked line would
/// tell the caller to read on from it, and give it the same answer again.
fn cap(
    mut p: brain::passage::Passage,
    wanted: Option<u32>,
) -> (brain::passage::Passage, Option<String>) {
    let mut cut_line = false;
    if p.text.len() > MAX_CHARS {
        if let Some(w) = wanted.filter(|&w| w > p.start_line && w <= p.end_line) {
            // Byte offset where line `w` starts, and where it ends.
            let skip = (w - p.start_line) as usize;
            let start = p
                .text
                .match_indices('\n')
                .nth(skip - 1)
                .map_or(0, |(i, _)| i + 1);
            let end = p.text[start..]
                .find('\n')
                .map_or(p.text.len(), |i| start + i);
            if end > MAX_CHARS {
                p.text.drain(..start);
                p.start_line = w;
            }
        }
    }
    if p.text.len() > MAX_CHARS {
        let end = brain::text::cut_at_char(&p.text, MAX_CHARS).len();
        match p.text[..end].rfind('\n') {
            Some(newline) => p.text.truncate(newline),
            None => {
                p.text.truncate(end);
                cut_line = true;
            }
        }
        // Counted by newlines: `lines()` would miss a last line that is empty.
        p.end_line = p.start_line + p.text.matches('\n').count() as u32;
    }
    let rest = p.total_lines.saturating_sub(p.end_line);
    let more = match (cut_line, rest) {
        (true, 0) => Some(format!(
            "line {} is cut after {MAX_CHARS} bytes; the whole file is the path above",
            p.end_line
        )),
        // The lines after the cut one are readable as any others: say how.
        (true, rest) => Some(format!(
            "line {} is cut after {MAX_CHARS} bytes (the whole file is the path above); {rest} more line{}: call get with line={} (and count) to read on",
            p.end_line,
            if rest == 1 { "" } else { "s" },
            p.end_line + 1
        )),
        (false, 0) => None,
        (false, rest) => Some(format!(
            "{rest} more line{}: call get with line={} (and count) to read on",
            if rest == 1 { "" } else { "s" },
            p.end_line + 1
        )),
    };
    (p, more)
}

/// `get`'s arguments as a [`NoteRef`]; a whole note is its first [`WHOLE_NOTE_LINES`]. A
/// path written `PATH:LINE[:COUNT]`, as `brain get` takes it, is understood too when
/// `line` and `count` are absent.
fn note_ref(root: &Path, args: &GetArgs) -> Result<NoteRef, String> {
    if args.path.trim().is_empty() {
        return Err("path is empty: pass a search hit's path".into());
    }
    if args.line.is_none() && args.count.is_none() {
        let mut note = NoteRef::parse_at(root, &args.path).map_err(|e| e.to_string())?;
        if note.line.is_none() {
            note.line = Some(1);
            note.count = Some(WHOLE_NOTE_LINES);
        }
        return Ok(note);
    }
    // `lore/x.md:13` with `line` too: two lines asked for. Read as a path, it named a note
    // that is not there, and the error sent the assistant to add a `:LINE` it had.
    if let Some(NoteRef {
        path,
        line: Some(_),
        ..
    }) = NoteRef::parse(&args.path)
        .ok()
        .filter(|n| n.path.ends_with(".md"))
    {
        return Err(format!(
            "path {} already holds a line, and line (or count) is given too: pass the path {path} with line and count, or the path alone",
            args.path
        ));
    }
    if args.line == Some(0) {
        return Err("line: lines are numbered from 1".into());
    }
    if args.count == Some(0) {
        return Err("count must be at least 1".into());
    }
    // `[[lore/x]]` names its note here too; a heading is lines of its own.
    let path = match brain::passage::link_form(root, &args.path) {
        Some((_, Some(heading))) => {
            return Err(format!(
                "path {} names the heading {heading}, and line (or count) is given too: pass the path alone for that heading's lines, or the note with line and count",
                args.path
            ))
        }
        Some((name, None)) => name.to_string(),
        None => args.path.clone(),
    };
    Ok(NoteRef {
        path,
        line: Some(args.line.unwrap_or(1)),
        count: args.count,
    })
}

fn success(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// A search's error names the CLI's flag (`--since: "3x" is not a date`); a tool's caller
/// gave an argument (`since`), and reads that name.
fn as_arguments(message: &str) -> String {
    for (flag, argument) in [
        ("--since", "`since`"),
        ("--before", "`before`"),
        ("--where", "`where`"),
        ("--type", "`type`"),
        ("--tag", "`tag`"),
    ] {
        if let Some(rest) = message.strip_prefix(flag) {
            if rest.starts_with([':', ' ']) {
                return format!("{argument}{rest}");
            }
        }
    }
    message.to_string()
}

/// What is wrong with the arguments `given` to `tool`, read as the tool reads them, naming
/// the argument; `None` when they are fine, or the tool is unknown (the router says so).
fn argument_error(
    tool: &str,
    given: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    /// The first argument of `given` that `T` refuses, named, with what it takes; `top`
    /// with the tool's own range (`top_max`), not the bounds of the type it is read into
    /// (`up to 4294967295`).
    fn read<T: serde::de::DeserializeOwned>(
        given: &serde_json::Map<String, serde_json::Value>,
        top_max: Option<usize>,
    ) -> Option<String> {
        let error = serde_path_to_error::deserialize::<_, T>(given).err()?;
        // Rust's names for what an argument takes, in words a caller knows.
        let why = error
            .inner()
            .to_string()
            .replace("expected u32", "expected a whole number of 0 or more")
            .replace("expected a boolean", "expected true or false");
        Some(match (error.path().to_string().as_str(), top_max) {
            (".", _) => format!("bad arguments: {why}"),
            ("top", Some(max)) => format!("{}; {why}", top_range(max)),
            (path, _) => format!("`{path}`: {why}"),
        })
    }
    match tool {
        "search" => read::<SearchArgs>(given, Some(MCP_MAX_TOP as usize)),
        "get" => read::<GetArgs>(given, None),
        "similar" => read::<SimilarArgs>(given, Some(brain::similar::MAX_TOP)),
        "check" => read::<CheckArgs>(given, None),
        "status" => read::<StatusArgs>(given, None),
        "links" => read::<LinksArgs>(given, None),
        _ => None,
    }
}

/// What a tool says of a `top` it cannot take: the range it takes.
fn top_range(max: usize) -> String {
    format!("`top`: takes a whole number from 1 to {max}")
}

fn failure(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("error: {message}"))])
}

/// The same JSON the CLI's `--json` prints, as text: no `structuredContent`, because
/// Claude Code shows the model only that field when it is present.
fn json(value: &impl Serialize) -> CallToolResult {
    match serde_json::to_string(value) {
        Ok(text) => success(text),
        Err(e) => failure(format!("could not encode the answer: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_message_echoing_a_huge_value_is_cut_in_its_middle() {
        use brain::kb::{CheckReport, Problem, ProblemKind};
        let report = CheckReport {
            problems: vec![Problem {
                kind: ProblemKind::MissingField,
                path: "lore/x.md".into(),
                line: Some(2),
                message: format!("says type {}, but it sits in lore/", "T".repeat(200_000)),
            }],
            ..CheckReport::default()
        };
        let cut = capped(report);
        let message = &cut.problems[0].message;
        assert!(message.len() < 400, "{}", message.len());
        assert!(message.starts_with("says type TTT") && message.ends_with("but it sits in lore/"));
    }

    #[test]
    fn a_note_of_many_links_lists_some_each_way_and_counts_them_all() {
        use brain::kb::{InLink, LinksReport, OutLink};
        let out = |i: u32| OutLink {
            target: format!("lore/n{i}"),
            heading: None,
            line: i,
            path: None,
            state: if i % 2 == 0 { "broken" } else { "ok" }.to_string(),
            why: None,
        };
        let report = LinksReport {
            path: "idea/moc.md".into(),
            outgoing: (1..=5000).map(out).collect(),
            incoming: (1..=3)
                .map(|i| InLink {
                    path: format!("idea/s{i}.md"),
                    line: 1,
                })
                .collect(),
            notice: None,
        };
        let cut = links_capped(report.clone());
        assert_eq!(cut.outgoing.len(), LINKS_MAX);
        assert_eq!(cut.outgoing[0].line, 1, "in their order");
        assert_eq!(cut.incoming.len(), 3);
        assert_eq!(
            cut.notice.as_deref(),
            Some("200 of 5000 links from it (2500 broken in all) and 3 of 3 links to it listed; run `brain links idea/moc.md` in a terminal for the whole list")
        );
        assert!(render::links(&cut).len() < 20_000);
        let small = LinksReport {
            outgoing: report.outgoing[..10].to_vec(),
            ..report.clone()
        };
        assert_eq!(links_capped(small.clone()), small);
        let odd = LinksReport {
            path: "idea/moc $(touch pwned).md".into(),
            ..report
        };
        let notice = links_capped(odd).notice.unwrap();
        assert!(
            notice.contains("run `brain links 'idea/moc $(touch pwned).md'` in a terminal"),
            "{notice}"
        );
    }

    #[test]
    fn a_long_check_lists_some_problems_of_every_kind_and_counts_them_all() {
        use brain::kb::{CheckReport, Problem, ProblemKind};
        let problem = |kind, i: usize| Problem {
            kind,
            path: format!("lore/n{i:03}.md"),
            line: Some(1),
            message: "x".into(),
        };
        let mut problems: Vec<Problem> = (0..140)
            .map(|i| problem(ProblemKind::BrokenLink, i))
            .collect();
        problems.extend((0..10).map(|i| problem(ProblemKind::MissingField, i)));
        let report = CheckReport {
            notes: 150,
            counts: [
                (ProblemKind::BrokenLink, 140),
                (ProblemKind::MissingField, 10),
            ]
            .into(),
            problems,
            ..CheckReport::default()
        };
        let cut = capped(report.clone());
        assert_eq!(cut.problems.len(), CHECK_MAX_PROBLEMS);
        let missing = cut
            .problems
            .iter()
            .filter(|p| p.kind == ProblemKind::MissingField)
            .count();
        assert_eq!(missing, 10, "a small kind is listed whole");
        assert_eq!(cut.problems[0].path, "lore/n000.md", "in their order");
        assert!(cut
            .notice
            .as_deref()
            .unwrap()
            .starts_with("100 of 150 problems listed"));
        let text = render::check(&cut);
        assert!(text.contains("150 problems in 150 notes"), "{text}");
        assert!(text.ends_with("or fix these and check again"), "{text}");
        let small = CheckReport {
            problems: report.problems[..5].to_vec(),
            ..report
        };
        assert_eq!(capped(small.clone()), small, "a short report is as it was");
    }
    use brain::passage::Passage;

    fn passage(text: &str, total_lines: u32) -> Passage {
        Passage {
            path: "a.md".into(),
            abs_path: "/b/a.md".into(),
            start_line: 1,
            end_line: text.lines().count() as u32,
            total_lines,
            text: text.into(),
        }
    }

    #[test]
    fn a_whole_note_is_its_head_and_says_how_to_read_on() {
        let args = |path: &str| GetArgs {
            path: path.into(),
            line: None,
            count: None,
            json: false,
        };
        let note = note_ref(Path::new("/nonexistent"), &args("a.md")).unwrap();
        assert_eq!((note.line, note.count), (Some(1), Some(WHOLE_NOTE_LINES)));
        // A line asked for in the path is kept as `brain get` reads it.
        let note = note_ref(Path::new("/nonexistent"), &args("a.md:7")).unwrap();
        assert_eq!((note.line, note.count), (Some(7), None));
        // A line in the path and `line` too: said as such, not as a missing note.
        let both = GetArgs {
            line: Some(1),
            ..args("a.md:13")
        };
        let err = note_ref(Path::new("/nonexistent"), &both).unwrap_err();
        assert!(
            err.contains("already holds a line") && err.contains("the path a.md with line"),
            "{err}"
        );

        let (_, more) = cap(passage("one\ntwo", 3), None);
        assert_eq!(
            more.as_deref(),
            Some("1 more line: call get with line=3 (and count) to read on")
        );
        let (p, more) = cap(passage("one\ntwo", 900), None);
        assert_eq!(p.text, "one\ntwo");
        assert_eq!(
            more.as_deref(),
            Some("898 more lines: call get with line=3 (and count) to read on")
        );
        assert_eq!(cap(passage("one\ntwo", 2), None).1, None);
    }

    #[test]
    fn long_text_is_cut_at_a_line_end_or_inside_one_huge_line() {
        let line = "x".repeat(30_000);
        let (p, more) = cap(passage(&format!("{line}\n{line}\n{line}"), 3), None);
        assert_eq!((p.text.len(), p.end_line), (30_000, 1));
        assert!(more.unwrap().contains("call get with line=2"));

        // A huge line with lines after it: cut, and how to read on past it.
        let text = format!("{}\nafter\nmore", "y".repeat(MAX_CHARS + 5));
        let more = cap(passage(&text, 3), None).1.unwrap();
        assert!(
            more.contains("line 1 is cut") && more.contains("2 more lines: call get with line=2"),
            "{more}"
        );

        let huge = "é".repeat(MAX_CHARS);
        let (p, more) = cap(passage(&huge, 1), None);
        assert!(p.text.len() <= MAX_CHARS && p.text.chars().all(|c| c == 'é'));
        assert_eq!(p.end_line, 1);
        assert!(more.unwrap().contains("line 1 is cut"));

        // A hit on a huge line after a short one and a blank: the answer holds that line
        // (cut), not only the context before it, so reading on never asks for it again.
        let text = format!("# One line\n\n{}", "minified ".repeat(20_000));
        let (p, more) = cap(passage(&text, 3), Some(3));
        assert_eq!((p.start_line, p.end_line), (3, 3));
        assert!(p.text.starts_with("minified"));
        assert!(more.unwrap().contains("line 3 is cut"));
        // Context that fits stays, and a blank last line is counted.
        let text = format!("a\n\n{}\nb", "x".repeat(MAX_CHARS));
        let (p, more) = cap(passage(&text, 4), Some(2));
        assert_eq!((p.start_line, p.end_line, p.text.as_str()), (1, 2, "a\n"));
        assert!(more.unwrap().contains("line=3"));
    }
}
