//! The Engine owns one brain root's resources: its settings, its index (one SQLite file)
//! and, once asked for, its verified embedding model and vector matrix. It hands out
//! scoped operations: sync the folder (all of it, or just the paths a watcher saw), embed
//! what is pending, search, read a note, report status. The stages of a search live in
//! [`crate::search`]; the SQL in [`crate::index`].

mod embedding;
mod kb;
mod semantic;
mod similar;
mod status;
mod time_left;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::index::sync::{self, SyncOptions, SyncReport};
use crate::index::walk::Scope;
use crate::index::{rebuild, recall, Index, Salvage};
use crate::passage::{NoteRef, Passage};
use crate::search::{self, Found, Fusion, Mode, SearchRequest, SearchResponse, Semantic};

pub use embedding::EmbedReport;
use semantic::SemanticCache;
pub use status::{JournalState, Status};
pub use time_left::{Backlog, Eta};

/// A search that syncs first also embeds up to this many new passages on the spot (a few
/// edited notes); more than that is `brain index`'s job, or the backend's.
pub const INLINE_EMBED_MAX: usize = 64;

/// The line printed when hybrid search has to do without a model.
pub const NO_MODEL_NOTICE: &str = "semantic search off: run 'brain model fetch'";

/// What a command answering from an index it could not sync says ([`Engine::sync_or_say_why`]).
pub(crate) fn behind_notice(cause: &str) -> String {
    format!("{BEHIND}: {cause}")
}

/// How [`behind_notice`] begins: a notice that does is the first of its answer's notices.
pub(crate) const BEHIND: &str = "the index could not be brought up to date";

/// When a loaded vector matrix gets one-bit sketches of its rows, so that a semantic
/// search scores only the rows near the query with their int8 codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sketches {
    /// Never: every search scans every row (a process that searches once).
    Never,
    /// From [`search::SHORTLIST_MIN_ROWS`] rows up: the warm backend of a large brain.
    Large,
    /// Always, whatever the size: `brain eval` measures the shortlist on small corpora.
    Always,
}

/// Notes from which a process that searches once scores its words from FTS5's lengths
/// (see `Engine::terms_for_one_search`). Below it `bm25()`'s single pass costs less than
/// reading the lengths and scoring word by word on threads of their own: a three-word query
/// over 1k notes took 5.0 ms that way against 4.2 by `bm25()`, at 10k the two were level,
/// at 100k word by word took half the time.
pub(crate) const WORDS_FROM_LENGTHS_FROM: i64 = 20_000;

/// Owns one brain root and its index. Cheap to share: every method takes `&self` and is
/// safe to call from many threads at once (reads use pooled connections; writes serialise).
pub struct Engine {
    config: Config,
    index: Index,
    semantic: Mutex<SemanticCache>,
    /// Held while the model loads, so that one load serves every search waiting for it.
    model_load: Mutex<()>,
    /// Whether a matrix rebuilt from the index is written to its cache file (see
    /// [`Engine::without_matrix_writes`]).
    write_matrix_file: bool,
    /// When the matrix gets one-bit sketches of its rows (see [`Engine::sketching`]).
    sketches: Sketches,
    /// Single-term keyword scores kept between searches (see [`Engine::remembering_terms`]).
    terms: Option<search::TermScores>,
    /// Embedding passes of this engine in progress (see [`Engine::embedding_now`]).
    passes: embedding::Passes,
    /// A thread of the backend embeds what each sync leaves pending
    /// ([`Engine::embeds_in_background`]): its notices do not send the person to
    /// `brain index`.
    background: std::sync::atomic::AtomicBool,
    /// Whether a pass of this engine has made the index's vectors its model's: a
    /// backend's later pass that finds another model's there leaves them to that model
    /// ([`crate::Error::ModelSwitched`]).
    claimed: std::sync::atomic::AtomicBool,
    /// See [`WORDS_FROM_LENGTHS_FROM`] (lower in tests).
    words_from_lengths: i64,
    /// What scoring two notes both ways read (`brain similar NOTE`, `--all`), kept until
    /// a note changes.
    pair_words: crate::similar::Remembered,
    /// The folder the brain folder led to when the engine opened (links resolved), whose
    /// index this is; `None` when it could not be resolved then.
    root_real: Option<PathBuf>,
}

impl Engine {
    /// Opens the index for `config.root` (creating it if needed). The root itself may be
    /// missing: `status` still works, and `sync` says what is wrong.
    pub fn open(config: Config) -> Result<Engine> {
        let index = Index::open(&config.index_path())?;
        Ok(Engine::over(config, index))
    }

    /// An engine with the defaults over an open `index`.
    fn over(config: Config, index: Index) -> Engine {
        Engine {
            root_real: std::fs::canonicalize(&config.root).ok(),
            config,
            index,
            semantic: Mutex::new(SemanticCache::default()),
            model_load: Mutex::new(()),
            write_matrix_file: true,
            pair_words: crate::similar::Remembered::default(),
            sketches: Sketches::Never,
            terms: None,
            passes: embedding::Passes::default(),
            background: std::sync::atomic::AtomicBool::new(false),
            claimed: std::sync::atomic::AtomicBool::new(false),
            words_from_lengths: WORDS_FROM_LENGTHS_FROM,
        }
    }

    /// Opens the engine of the brain a command names, refusing a brain folder that does not
    /// exist or is not a folder unless an index for it exists already: a mistyped `--dir`
    /// leaves no index behind, while an index whose folder went away (an unmounted disk)
    /// still opens, for `status` to say so. The backend opens with [`Engine::open`]: it
    /// waits for a missing folder to appear.
    pub fn open_named(config: Config) -> Result<Engine> {
        Engine::check_named(&config)?;
        Engine::open(config)
    }

    /// The check [`Engine::open_named`] makes, for a command that opens the engine
    /// otherwise (`brain serve`, which starts a backend): the brain folder must exist and
    /// be a folder, unless an index for it exists already.
    pub fn check_named(config: &Config) -> Result<()> {
        if !config.index_path().exists() {
            crate::index::walk::check_root(&config.root)?;
        }
        Ok(())
    }

    /// The same engine, reading the matrix cache file (`matrix.bin`) but never writing it:
    /// for the warm backend, which keeps the matrix in memory (copied out of the file, which
    /// a one-shot process maps instead) and reloads it after every embedding pass. Writing it each time would put the whole matrix on disk per edit
    /// (about 100 MB at 100k passages) for processes that ask the backend anyway; a
    /// process without one writes it when it finds it stale.
    pub fn without_matrix_writes(mut self) -> Engine {
        self.write_matrix_file = false;
        self
    }

    /// The same engine, building one-bit sketches of the vector matrix as `when` says,
    /// for a search to shortlist the rows it scores (`search::Matrix::with_shortlist`).
    pub fn sketching(mut self, when: Sketches) -> Engine {
        self.sketches = when;
        self
    }

    /// The same engine, keeping each query word's keyword scores between searches until a
    /// note changes: for the warm backend, where the panel searches again on every
    /// keystroke with the words already typed. (A process that searches once would only
    /// pay for scoring word by word.)
    pub fn remembering_terms(mut self) -> Engine {
        self.terms = Some(search::TermScores::new(search::BM25_WEIGHTS));
        self
    }

    /// Readies the remembered keyword scores for the notes as they are now (reads FTS5's
    /// note lengths when they moved; see [`search::TermScores::prepare`]): the backend does
    /// it after each sync, so that no search waits for it. Nothing to do for an engine that
    /// does not remember.
    pub fn warm_keywords(&self) -> Result<()> {
        match &self.terms {
            Some(terms) => terms.prepare(&self.index.read()?),
            None => Ok(()),
        }
    }

    /// Builds the index for `config.root` again from the notes: the old file (damaged,
    /// truncated, or from a newer brain) is moved aside to `brain.sqlite.bak` (or `.bak.N`
    /// beside older backups), never deleted, and what can still be read of its search and
    /// read logs and its vectors is copied into the new one, and the notes are read into it,
    /// all before it takes the old one's place (the sync's report comes back). The caller
    /// then embeds as for a new index.
    pub fn rebuild(config: Config) -> Result<(Engine, Salvage, SyncReport)> {
        let path = config.index_path();
        // The new index is made beside the old one, and takes its place only once it holds
        // the logs and vectors that could be saved: a rebuild killed before that leaves the
        // old index as it was (and its leftovers are cleared by the next rebuild), where
        // one that moved the old index aside first left an empty index to carry on with.
        let staging = rebuild::staging_path(&path);
        let rebuilt = rebuild::rebuilt_path(&path);
        rebuild::finish_interrupted(&path);
        rebuild::remove_with_sides(&staging)?;
        let index = Index::open(&staging)?;
        // The notes are read into the new index before it takes the old one's place: put
        // in place empty, it answered the searches made meanwhile with nothing, or with
        // the notes read so far, and "run brain index". (Their vectors come after, from
        // those kept, or embedded as any edit's are.)
        let synced = sync::sync(&index, &config)?;
        // Then the logs, so that the searches made during that sync (minutes at 100k
        // notes), logged in the old index, come across too.
        // (An empty file has nothing to keep, and would only be said to lack its tables.)
        let mut salvage = match std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
            true => rebuild::salvage(&path, &index)?,
            false => Salvage::default(),
        };
        // Vectors came in after the sync's last change: the version moves with them, as
        // it does with every change of vectors (a cache keyed on it would be stale).
        index.write(|tx| crate::index::vectors::bump_version(tx))?;
        index.checkpoint_all()?;
        drop(index);
        rebuild::remove_side_files(&staging)?;
        // Complete from here: named so, an interrupted swap is finished by the next open.
        std::fs::rename(&staging, &rebuilt).map_err(|e| Error::io(&staging, e))?;
        salvage.backup = rebuild::set_aside(&path)?;
        match std::fs::rename(&rebuilt, &path) {
            Ok(()) => {}
            // Another process opened the index meanwhile and finished the swap itself.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && path.exists() => {}
            Err(e) => return Err(Error::io(&rebuilt, e)),
        }
        let _ = std::fs::remove_file(crate::index::made_path(&staging));
        let index = Index::open(&path)?;
        Ok((Engine::over(config, index), salvage, synced))
    }

    /// Whether this engine is in an embedding pass now: its searches then keep the vector
    /// matrix they have a while longer, as each batch moves the vectors version.
    /// Says that a thread of the backend embeds whatever each sync leaves pending.
    pub fn embeds_in_background(&self) {
        self.background
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn embedding_now(&self) -> bool {
        self.passes.running()
    }

    /// The index file this engine has open (which `config().index_path()` may no longer
    /// name: it follows the brain folder's links as they are now).
    pub fn index_file(&self) -> &std::path::Path {
        self.index.path()
    }

    /// The settings this engine was opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Brings the index in line with the folder (notes, full-text index and passages; the
    /// vectors of new passages are made by [`Engine::embed_pending`]).
    pub fn sync(&self) -> Result<SyncReport> {
        self.same_root()?;
        sync::sync(&self.index, &self.config)
    }

    /// `Err` when the brain folder, a symlink, now leads to another folder than when the
    /// engine opened: that folder has an index of its own, and synced into this one its
    /// notes would replace these (their vectors dropped) and be served as this brain's.
    /// A folder that is not there at all is the sync's to say.
    fn same_root(&self) -> Result<()> {
        let (Some(was), Ok(now)) = (&self.root_real, std::fs::canonicalize(&self.config.root))
        else {
            return Ok(());
        };
        match &now == was {
            true => Ok(()),
            false => Err(Error::RootMoved {
                path: self.config.root.clone(),
                was: was.clone(),
                now,
            }),
        }
    }

    /// Syncs before answering (reading only what the volume's change journal says changed,
    /// where there is one it can trust: `index::journal`); an index that cannot be written
    /// (a full disk, a read-only data dir) is left as it is, and the cause comes back for
    /// the notice of a command that can answer from what the index holds
    /// ([`behind_notice`]). Any other failure is an error.
    pub(crate) fn sync_or_say_why(&self) -> Result<Option<String>> {
        self.same_root()?;
        match sync::sync_recent(&self.index, &self.config) {
            Ok(_) => Ok(None),
            Err(e) if e.is_unwritable() => Ok(Some(e.to_string())),
            Err(e) => Err(e),
        }
    }

    /// [`Engine::sync`] as `options` say (rewrite everything, stop when cancelled).
    pub fn sync_with(&self, options: SyncOptions<'_>) -> Result<SyncReport> {
        self.same_root()?;
        sync::sync_with(&self.index, &self.config, options)
    }

    /// Syncs only the paths in `scope` (what a watcher saw change).
    pub fn sync_paths(&self, scope: &Scope, options: SyncOptions<'_>) -> Result<SyncReport> {
        self.same_root()?;
        sync::sync_paths(&self.index, &self.config, scope, options)
    }

    /// The title of the indexed note at `path` (relative to the root).
    pub fn note_title(&self, path: &str) -> Result<Option<String>> {
        self.index.read()?.title_of(path)
    }

    /// Every indexed path, relative to the root.
    pub fn note_paths(&self) -> Result<HashSet<String>> {
        self.index.read()?.paths()
    }

    /// Runs a search (syncing first when the request says so) and records it in the recall log.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        self.search_with(req, Fusion::Default)
    }

    /// [`Engine::search`], hybrid ordered by `fusion`.
    pub(crate) fn search_with(
        &self,
        req: &SearchRequest,
        fusion: Fusion,
    ) -> Result<SearchResponse> {
        let mut req = req.clone();
        req.filters.resolve()?;
        req.filters.parsed_conditions()?;
        let req = &req;
        let text = search::validate(req)?;
        let mut notices: Vec<String> = Vec::new();
        let unsynced = match req.sync {
            true => self.sync_or_say_why()?,
            false => None,
        };
        notices.extend(unsynced.as_deref().map(behind_notice));
        self.check_conditions(&req.filters)?;
        let started = Instant::now();
        let mut found = self.find(req, fusion, &mut notices)?;
        notices.extend(std::mem::take(&mut found.notices));
        // Logged after the read transaction: a read cannot become a write once another
        // writer has committed.
        // The results stand without their log row: a full disk or a read-only data dir
        // costs the search its line in `brain stats`, not its answer.
        let recall_id = match self.record(req, text, &found, started) {
            Ok(id) => Some(id),
            Err(e) if e.is_unwritable() => {
                tracing::warn!(error = %e, "search not logged");
                // The sync's notice already gave the cause: it is said once.
                match unsynced == Some(e.to_string()) {
                    true => notices.push("this search was not logged either".into()),
                    false => notices.push(format!("this search was not logged: {e}")),
                }
                None
            }
            Err(e) => return Err(e),
        };
        let notice = (!notices.is_empty()).then(|| notices.join("; "));
        Ok(SearchResponse {
            query: req.query.clone(),
            mode: found.mode,
            results: found.results,
            recall_id,
            notice,
            explain: found.explain.map(Box::new),
        })
    }

    /// A search's findings, neither synced first nor logged: what [`Engine::search_with`]
    /// reports and what the evaluation studies. (`req.sync` only allows embedding a few
    /// pending passages on the spot.)
    pub(crate) fn find(
        &self,
        req: &SearchRequest,
        fusion: Fusion,
        notices: &mut Vec<String>,
    ) -> Result<Found> {
        let text = search::validate(req)?;
        let semantic = match req.mode {
            Mode::Bm25 => None,
            Mode::Hybrid | Mode::Semantic => self.semantic_ready(req.sync, notices)?,
        };
        if semantic.is_none() && req.mode == Mode::Semantic {
            // Without the model, that is the cause; with it, the vectors are not there yet.
            let said = notices
                .iter()
                .map(|n| n.trim_start_matches("semantic search off: "))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(Error::InvalidInput(
                match crate::embed::is_installed(&self.config) {
                    false => format!("--mode semantic needs the embedding model: {said}"),
                    true => format!("--mode semantic cannot answer yet: {said}"),
                },
            ));
        }
        let reader = self.index.read()?;
        let semantic = semantic.as_ref().map(|(embedder, matrix)| Semantic {
            embedder: embedder.as_ref(),
            matrix,
        });
        let once;
        let terms = match &self.terms {
            Some(terms) => Some(terms),
            None if req.mode != Mode::Semantic && req.filters.is_empty() => {
                once = self.terms_for_one_search(&reader);
                once.as_ref()
            }
            None => None,
        };
        search::run(&reader, &self.config, req, text, semantic, fusion, terms)
    }

    /// For an engine that does not remember words between searches (a process that
    /// searches once) over a brain of [`WORDS_FROM_LENGTHS_FROM`] notes or more, keyword
    /// scores word by word from FTS5's note lengths, as the backend scores a word new to
    /// it: the lengths come from the lengths file, which the first process after a change
    /// writes, and each word costs about a third of what `bm25()` costs per matching note
    /// (at 100k notes, a common word's tens of milliseconds). `None` for a smaller brain,
    /// or when the lengths cannot be had: then `bm25()` scores, the same numbers.
    fn terms_for_one_search(
        &self,
        reader: &crate::index::Reader<'_>,
    ) -> Option<search::TermScores> {
        match reader.fts_rows() {
            Ok(rows) if rows >= self.words_from_lengths => {}
            Ok(_) => return None,
            Err(e) => {
                tracing::debug!(error = %e, "keyword scores by bm25()");
                return None;
            }
        }
        let terms = search::TermScores::new(search::BM25_WEIGHTS);
        match terms.prepare(reader) {
            Ok(()) => Some(terms),
            Err(e) => {
                tracing::debug!(error = %e, "keyword scores by bm25()");
                None
            }
        }
    }

    /// For each term of `found`'s query, which of its candidates hold it.
    pub(crate) fn term_presence(&self, found: &Found) -> Result<Vec<HashSet<i64>>> {
        let ids: Vec<i64> = found.candidates.iter().map(|c| c.note_id).collect();
        search::term_presence(&self.index.read()?, &found.query, &ids)
    }

    /// The path of the note with id `id` (empty when it is gone).
    pub(crate) fn path_of(&self, id: i64) -> Result<String> {
        self.index.read()?.path_of(id)
    }

    /// Refuses `--where` conditions that do not parse, or that name a field no note has
    /// (listing the fields there are: a typo would otherwise just find nothing).
    fn check_conditions(&self, filters: &search::Filters) -> Result<()> {
        let conditions = filters.parsed_conditions()?;
        if conditions.is_empty() {
            return Ok(());
        }
        let known = self.index.read()?.field_names()?;
        // A field a type's SCHEMA.md declares is a real one, though no note sets it yet
        // (`status!=deprecated` before anything is deprecated); read only on a miss.
        let mut declared: Option<std::collections::BTreeSet<String>> = None;
        for (spec, c) in filters.conditions.iter().zip(&conditions) {
            if !known.contains(&c.field) {
                let declared = declared.get_or_insert_with(|| {
                    crate::kb::schema::Schemas::load(&self.config.root)
                        .map(|s| {
                            s.types
                                .values()
                                .flat_map(|t| t.fields.keys().chain(&t.required).cloned())
                                .collect()
                        })
                        .unwrap_or_default()
                });
                if declared.contains(&c.field) {
                    continue;
                }
                // Every field a condition may name: those notes set and those declared.
                let mut fields: Vec<&str> = known.iter().map(String::as_str).collect();
                fields.extend(declared.iter().map(String::as_str));
                fields.sort_unstable();
                fields.dedup();
                return Err(Error::InvalidInput(format!(
                    "--where {spec}: no note has a field {:?} and no SCHEMA.md declares it; the fields are {}",
                    c.field,
                    if fields.is_empty() {
                        "(none)".into()
                    } else {
                        fields.join(", ")
                    }
                )));
            }
        }
        Ok(())
    }

    /// Appends a search to the recall log; returns its id.
    fn record(
        &self,
        req: &SearchRequest,
        text: &str,
        found: &Found,
        started: Instant,
    ) -> Result<i64> {
        let conn = self.index.conn()?;
        let paths: Vec<&str> = found.results.iter().map(|h| h.path.as_str()).collect();
        let filters = serde_json::to_value(&req.filters).unwrap_or_default();
        let took = started.elapsed().as_micros() as u64;
        let entry = recall::Entry {
            query: text,
            mode: found.mode.as_str(),
            filters: &filters,
            paths: &paths,
            took_us: took,
            as_you_type: req.as_you_type,
            keywords: found.keywords.map(|n| n as u64),
        };
        let id = recall::record(&conn, &entry).map_err(|e| self.index.err(e))?;
        drop(conn);
        crate::usage::now_and_then_cap(&self.index, id, self.config.log_keep_days)?;
        Ok(id)
    }

    /// Reads a note, or the lines around a hit, from the brain folder (never outside it).
    pub fn get(&self, note: &NoteRef) -> Result<Passage> {
        crate::passage::read(&self.config.root, note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Filters;

    /// An engine over a temp brain of three notes (no model installed).
    fn engine() -> (tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        for (path, text) in [
            ("lore/wal.md", "# WAL checkpoints\n\nRun wal_checkpoint(TRUNCATE) when the WAL grows.\n"),
            ("lore/retries.md", "# Retries need jitter\n\nBackoff without jitter syncs every client.\n"),
            ("idea/capture.md", "---\ntags: [inbox]\n---\n# Quick capture\n\nA hotkey drops a note into the inbox.\n"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let engine = Engine::open(Config::for_root(&root, dir.path().join("data"))).unwrap();
        (dir, engine)
    }

    fn req(query: &str, mode: Mode) -> SearchRequest {
        SearchRequest {
            mode,
            ..SearchRequest::new(query)
        }
    }

    #[test]
    fn asking_for_more_results_shows_more_and_keeps_the_first_in_their_order() {
        // 300 notes drawn from a small vocabulary, some holding the flags and the names
        // the queries ask for: deep enough that --top 100 reads past the lists' first 50.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(root.join("notes")).unwrap();
        let words = [
            "java",
            "kubectl",
            "pods",
            "cluster",
            "version",
            "-version",
            "-n",
            "deploy",
            "image",
            "convert",
            "gif",
            "runtime",
            "jvm",
            "install",
            "namespace",
            "logs",
            "config",
            "secret",
            "restart",
            "build",
            "release",
            "network",
            "proxy",
            "cache",
        ];
        let mut rng = Lcg(11);
        for i in 0..300 {
            // Sections of their own: a note's whole weighs in beside its best passage.
            let mut section = || {
                let n = 8 + rng.below(40);
                rng.words(&words, n)
            };
            let (one, two, three) = (section(), section(), section());
            let title = rng.words(&words, 2);
            let text =
                format!("# {title}\n\n{one}\n\n## More\n\n{two}\n\n## Still more\n\n{three}\n");
            std::fs::write(root.join(format!("notes/n{i:03}.md")), text).unwrap();
        }
        // A flag held only by long notes that keywords rank below the first 50 (the
        // notes that say `javac` five times): literal holders from down there were lifted
        // over what --top 10 showed.
        let filler = words[6..].join(" ").repeat(30);
        for i in 0..80 {
            let text = format!(
                "# Javac {i}\n\njavac javac javac javac javac {}\n",
                words[i % 24]
            );
            std::fs::write(root.join(format!("notes/java{i:02}.md")), text).unwrap();
        }
        for i in 0..20 {
            let text = format!("# Archive {i}\n\n{filler} tar -xzf {filler}\n");
            std::fs::write(root.join(format!("notes/tar{i:02}.md")), text).unwrap();
        }
        let mut config = Config::for_root(&root, dir.path().join("data"));
        config.model = "stand-in-hash-64".into();
        let engine = Engine::open(config).unwrap();
        engine.sync().unwrap();
        engine.embed_pending().unwrap();
        let paths = |query: &str, mode: Mode, top: usize| -> Vec<String> {
            let r = SearchRequest {
                top,
                ..req(query, mode)
            };
            let found = engine.search(&r).unwrap().results;
            found.into_iter().map(|h| h.path).collect()
        };
        for query in [
            "javac -xzf",
            "java -version",
            "kubectl",
            "kubectl logs -n",
            "gif convert",
            "jvm runtime",
        ] {
            for mode in [Mode::Bm25, Mode::Hybrid, Mode::Semantic] {
                let few = paths(query, mode, 10);
                let many = paths(query, mode, 350);
                assert!(many.len() >= few.len(), "{query} {mode:?}");
                assert_eq!(few, many[..few.len()], "{query} {mode:?}");
                assert_eq!(paths(query, mode, 30)[..few.len()], few, "{query} {mode:?}");
            }
        }
    }

    #[test]
    fn a_backends_pending_passages_are_said_to_be_embedded_now_not_sent_to_brain_index() {
        let (dir, _) = engine();
        let mut config = Config::for_root(dir.path().join("brain"), dir.path().join("data"));
        config.model = "stand-in-hash-64".into();
        let engine = Engine::open(config).unwrap();
        engine.sync().unwrap();
        engine.embed_pending().unwrap();
        // A note saved since: its passage has no vector yet.
        std::fs::write(
            dir.path().join("brain/lore/new.md"),
            "# Jitter again\n\nMore on jitter.\n",
        )
        .unwrap();
        engine.sync().unwrap();
        let ask = || {
            let r = SearchRequest {
                sync: false,
                ..req("jitter", Mode::Hybrid)
            };
            engine.search(&r).unwrap().notice.unwrap_or_default()
        };
        // In a process of its own, `brain index` is what embeds them.
        assert!(ask().contains("still waiting for embeddings"), "{}", ask());
        // In the backend, its embedding thread does.
        engine.embeds_in_background();
        let said = ask();
        assert!(
            said.contains("being embedded now") && !said.contains("brain index"),
            "{said}"
        );
    }

    #[test]
    fn hybrid_without_a_model_ranks_by_keywords_and_says_so() {
        let (_dir, engine) = engine();
        let r = engine.search(&req("jitter backoff", Mode::Hybrid)).unwrap();
        assert_eq!(r.mode, Mode::Bm25);
        assert_eq!(r.results[0].path, "lore/retries.md");
        assert_eq!(r.notice.as_deref(), Some(NO_MODEL_NOTICE));
        assert!(r.recall_id.is_some_and(|id| id > 0));
    }

    #[test]
    fn a_title_that_is_the_query_leads_though_it_holds_common_words() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(&root).unwrap();
        for (path, text) in [
            ("go.md", "# go\n\nManage Go source code. Run go build, go test, go mod.\n"),
            ("go-get.md", "# go get\n\nAdd a dependency package to the module.\n"),
            ("howto.md", "---\ntitle: How to cut a release\n---\nSteps: tag, build, publish.\n"),
            ("checklist.md", "# Release cutting checklist\n\nCut the release branch. Cut release notes. How we cut a release every week, and how to cut a release fast.\n"),
        ] {
            std::fs::write(root.join(path), text).unwrap();
        }
        let engine = Engine::open(Config::for_root(&root, dir.path().join("data"))).unwrap();
        for (query, first) in [
            ("go get", "go-get.md"),
            ("go", "go.md"),
            ("How to cut a release", "howto.md"),
        ] {
            let r = engine.search(&req(query, Mode::Bm25)).unwrap();
            assert_eq!(r.results[0].path, first, "{query}");
        }
    }

    #[test]
    fn a_brain_folder_link_repointed_under_the_engine_is_not_synced_into_its_index() {
        let dir = tempfile::tempdir().unwrap();
        for (folder, note) in [("a", "alpha.md"), ("b", "beta.md")] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join(note), "# note\n").unwrap();
        }
        let link = dir.path().join("brain");
        std::os::unix::fs::symlink(dir.path().join("a"), &link).unwrap();
        let engine = Engine::open(Config::for_root(&link, dir.path().join("data"))).unwrap();
        engine.sync().unwrap();
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(dir.path().join("b"), &link).unwrap();
        let err = engine.sync().unwrap_err();
        assert!(matches!(err, Error::RootMoved { .. }), "{err}");
        assert!(
            err.to_string().contains("restart what has it open"),
            "{err}"
        );
        let scope = Scope::everything();
        assert!(engine.sync_paths(&scope, SyncOptions::default()).is_err());
        assert_eq!(
            engine.note_paths().unwrap(),
            HashSet::from(["alpha.md".to_string()])
        );
    }

    #[test]
    fn a_character_that_shows_as_nothing_does_not_split_a_word() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join("a.md"),
            "Blue-green deploy\u{200B}ment, soft\u{AD}ware.\n",
        )
        .unwrap();
        std::fs::write(root.join("b.md"), "Nothing here but gardening.\n").unwrap();
        let engine = Engine::open(Config::for_root(&root, dir.path().join("data"))).unwrap();
        for query in [
            "deployment",
            "software",
            "de\u{200B}ployment",
            "\u{FEFF}deployment",
        ] {
            let r = engine.search(&req(query, Mode::Bm25)).unwrap();
            assert_eq!(
                r.results.first().map(|h| h.path.as_str()),
                Some("a.md"),
                "{query:?}"
            );
        }
    }

    #[test]
    fn a_query_past_the_word_cap_still_searches_and_says_what_it_left_out() {
        let (_dir, engine) = engine();
        let filler: String = (0..crate::search::query::MAX_TERMS)
            .map(|i| format!("w{i} "))
            .collect();
        let r = engine
            .search(&req(&format!("jitter {filler}"), Mode::Bm25))
            .unwrap();
        assert_eq!(r.results[0].path, "lore/retries.md");
        assert_eq!(
            r.notice.as_deref(),
            Some("only the first 64 words of the query were searched for as keywords")
        );
        let r = engine.search(&req("jitter backoff", Mode::Bm25)).unwrap();
        assert_eq!(r.notice, None);
    }

    #[test]
    fn an_empty_note_path_for_links_is_bad_input_that_says_what_to_give() {
        let (_dir, engine) = engine();
        for empty in ["", "  ", "./"] {
            let err = engine.links(empty, true).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{empty:?}");
            assert!(
                err.to_string().starts_with("the note path is empty: "),
                "{err}"
            );
        }
        assert_eq!(
            engine.links("./lore/wal.md", true).unwrap().path,
            "lore/wal.md"
        );
    }

    #[test]
    fn semantic_without_a_model_is_bad_input() {
        let (_dir, engine) = engine();
        let err = engine.search(&req("anything", Mode::Semantic)).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(err.to_string().contains("brain model fetch"), "{err}");
    }

    #[test]
    fn bad_requests_are_refused_before_any_work() {
        let (_dir, engine) = engine();
        for bad in [
            req("   ", Mode::Bm25),
            SearchRequest {
                top: 0,
                ..req("wal", Mode::Bm25)
            },
        ] {
            assert_eq!(engine.search(&bad).unwrap_err().exit_code(), 2);
        }
        assert_eq!(
            engine.status().unwrap().recalls.searches,
            0,
            "nothing was logged"
        );
    }

    #[test]
    fn an_unknown_type_filter_names_the_types_there_are() {
        let (_dir, engine) = engine();
        let mut r = req("wal", Mode::Bm25);
        r.filters = Filters {
            kind: Some("lroe".into()),
            ..Filters::default()
        };
        let found = engine.search(&r).unwrap();
        assert!(found.results.is_empty());
        assert_eq!(
            found.notice.as_deref(),
            Some("no notes of type \"lroe\"; types here: idea, lore")
        );
        r.filters.kind = None;
        r.filters.tag = Some("#inbox".into());
        r.query = "hotkey".into();
        assert_eq!(
            engine.search(&r).unwrap().results[0].path,
            "idea/capture.md"
        );
    }

    #[test]
    fn status_counts_what_sync_indexed() {
        let (_dir, engine) = engine();
        let before = engine.status().unwrap();
        assert_eq!((before.notes, before.last_sync_at), (0, None));
        let report = engine.sync().unwrap();
        assert_eq!(report.added, 3);
        let after = engine.status().unwrap();
        assert_eq!(after.notes, 3);
        assert_eq!(after.types.get("lore"), Some(&2));
        assert_eq!(
            after.pending_chunks, after.chunks,
            "no model: every passage waits"
        );
        assert!(after.last_sync_at.is_some());
        assert_eq!(engine.note_paths().unwrap().len(), 3);
    }

    #[test]
    fn explain_lists_the_keyword_stage() {
        let (_dir, engine) = engine();
        let mut r = req("wal_checkpoint", Mode::Bm25);
        r.explain = true;
        let found = engine.search(&r).unwrap();
        let explain = found.explain.expect("explain asked for");
        assert_eq!(explain.mode, Mode::Bm25);
        assert_eq!(explain.bm25[0].path, "lore/wal.md");
        assert_eq!(explain.bm25[0].exact, crate::search::Exact::Identifier);
        assert!(explain.fused.is_none() && explain.semantic.is_empty());
    }

    /// A deterministic stream of small numbers.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }

        fn words(&mut self, vocabulary: &[&str], n: usize) -> String {
            (0..n)
                .map(|_| vocabulary[self.below(vocabulary.len())])
                .collect::<Vec<_>>()
                .join(" ")
        }
    }

    /// The words of a query scored on other threads, each in a read transaction of its own,
    /// are the query's own snapshot's: one that sees a later note is scored again.
    #[test]
    fn new_words_scored_beside_an_overtaken_snapshot_come_from_that_snapshot() {
        use crate::search::query::Query;
        use crate::search::{TermScores, BM25_WEIGHTS};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(&root).unwrap();
        for (i, body) in ["alpha beta", "beta gamma gamma", "alpha gamma delta"]
            .iter()
            .enumerate()
        {
            std::fs::write(root.join(format!("n{i}.md")), format!("# n{i}\n\n{body}\n")).unwrap();
        }
        let engine = Engine::open(Config::for_root(&root, dir.path().join("data"))).unwrap();
        engine.sync().unwrap();
        let remembered = TermScores::new(BM25_WEIGHTS);
        let query = Query::parse("alpha beta gamma");
        let expr = query.to_match().unwrap();
        let bits = |v: Vec<(i64, f64)>| {
            v.into_iter()
                .map(|(id, s)| (id, s.to_bits()))
                .collect::<Vec<_>>()
        };
        let reader = engine.index.read().unwrap();
        let want = reader
            .fts_all_scores(&expr, BM25_WEIGHTS, &Filters::default())
            .unwrap();
        // A note changes after this reader's snapshot: the words scored on other threads
        // (each in a transaction of its own) would see it.
        std::fs::write(root.join("n3.md"), "# n3\n\nalpha beta gamma gamma\n").unwrap();
        engine.sync().unwrap();
        let got = remembered.all(&reader, &query).unwrap().unwrap();
        assert_eq!(bits(got), bits(want.clone()), "the reader's own snapshot");
        drop(reader);
        let reader = engine.index.read().unwrap();
        let now = reader
            .fts_all_scores(&expr, BM25_WEIGHTS, &Filters::default())
            .unwrap();
        assert_eq!(now.len(), want.len() + 1);
        let got = remembered.all(&reader, &query).unwrap().unwrap();
        assert_eq!(bits(got), bits(now), "nothing kept from the older snapshot");
    }

    /// A process that searches once scores words from the lengths file: its first search
    /// writes it, the next reads it, a changed note makes it stale (written again), and a
    /// damaged one is never trusted. The hits are `bm25()`'s, to the last bit, every time.
    #[test]
    fn searches_without_a_backend_share_fts5s_lengths_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(&root).unwrap();
        let mut rng = Lcg(11);
        let vocabulary = [
            "tar", "files", "list", "size", "disk", "usage", "port", "ssh",
        ];
        for i in 0..60 {
            let (t, b) = (1 + rng.below(2), 2 + rng.below(30));
            let text = format!(
                "# {}\n\n{}\n",
                rng.words(&vocabulary, t),
                rng.words(&vocabulary, b)
            );
            std::fs::write(root.join(format!("n{i}.md")), text).unwrap();
        }
        let config = Config::for_root(&root, dir.path().join("data"));
        let mut once = Engine::open(config.clone()).unwrap();
        once.sync().unwrap();
        let file = once.index.lengths_path();
        let hits = |engine: &Engine, q: &str| {
            let req = SearchRequest {
                top: 50,
                sync: false,
                ..req(q, Mode::Bm25)
            };
            let r = engine.search(&req).unwrap();
            r.results
                .iter()
                .map(|h| (h.path.clone(), h.score.to_bits()))
                .collect::<Vec<_>>()
        };
        // By `bm25()`: an engine that remembers words but has not read the lengths.
        let by_bm25 = |q: &str| {
            hits(
                &Engine::open(config.clone()).unwrap().remembering_terms(),
                q,
            )
        };
        let queries = ["files list size", "tar disk usage port", "ssh files"];
        assert_eq!(hits(&once, queries[0]), by_bm25(queries[0]));
        assert!(
            !file.exists(),
            "a brain this small is scored by bm25() alone"
        );
        once.words_from_lengths = 0;
        for q in queries {
            assert_eq!(hits(&once, q), by_bm25(q), "{q}");
        }
        let written = std::fs::read(&file).expect("the first search wrote the file");
        let inode = |p: &std::path::Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).unwrap().ino()
        };
        let first = inode(&file);
        assert_eq!(hits(&once, "files tar"), by_bm25("files tar"));
        assert_eq!(inode(&file), first, "read, not written again");

        std::fs::write(root.join("n0.md"), "# tar\n\ntar tar files\n").unwrap();
        once.sync().unwrap();
        for q in queries {
            assert_eq!(hits(&once, q), by_bm25(q), "{q} after an edit");
        }
        let rewritten = std::fs::read(&file).unwrap();
        assert_ne!(rewritten, written, "the stale file was replaced");

        let mut damaged = rewritten.clone();
        let at = damaged.len() - 20;
        damaged[at] ^= 0x10;
        std::fs::write(&file, &damaged).unwrap();
        for q in queries {
            assert_eq!(hits(&once, q), by_bm25(q), "{q} with a damaged file");
        }
        assert_eq!(std::fs::read(&file).unwrap(), rewritten, "replaced whole");
    }

    /// The warm backend's remembered single-term scores add up to FTS5's scores of the whole
    /// query, to the last bit, for queries of every shape; and a changed note drops them.
    #[test]
    fn remembered_term_scores_are_fts5s_own_to_the_last_bit() {
        use crate::search::query::Query;
        use crate::search::{TermScores, BM25_WEIGHTS};
        const VOCABULARY: &[&str] = &[
            "tar",
            "archive",
            "extract",
            "files",
            "file",
            "list",
            "size",
            "disk",
            "usage",
            "process",
            "kill",
            "name",
            "self-signed",
            "wal_checkpoint",
            "docker",
            "logs",
            "compress",
            "folder",
            "network",
            "port",
            "ssh",
            "tunnel",
            "-xzf",
            "rare",
        ];
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(&root).unwrap();
        let mut rng = Lcg(7);
        for i in 0..300 {
            let n = 1 + rng.below(3);
            let title = rng.words(VOCABULARY, n);
            let n = rng.below(3);
            let tags = rng.words(&VOCABULARY[..8], n).replace(' ', ", ");
            let n = 3 + rng.below(80);
            let body = rng.words(VOCABULARY, n);
            let text = format!("---\ntags: [{tags}]\n---\n# {title}\n\n{body}\n");
            std::fs::write(root.join(format!("n{i}.md")), text).unwrap();
        }
        let engine = Engine::open(Config::for_root(&root, dir.path().join("data"))).unwrap();
        engine.sync().unwrap();
        // Words scored by `bm25()`, and words scored from FTS5's lengths (as the backend
        // does once it has read them after a sync).
        let remembered = TermScores::new(BM25_WEIGHTS);
        let from_lengths = TermScores::new(BM25_WEIGHTS);
        let bits = |v: &[(i64, f64)]| {
            v.iter()
                .map(|&(id, s)| (id, s.to_bits()))
                .collect::<Vec<_>>()
        };
        let same = |text: &str| {
            let query = Query::parse(text);
            let reader = engine.index.read().unwrap();
            let expr = query.to_match().unwrap();
            let want = bits(
                &reader
                    .fts_all_scores(&expr, BM25_WEIGHTS, &Filters::default())
                    .unwrap(),
            );
            from_lengths.prepare(&reader).unwrap();
            for (how, terms) in [("bm25()", &remembered), ("lengths", &from_lengths)] {
                let got = bits(&terms.all(&reader, &query).unwrap().unwrap());
                let first = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    got.len() == want.len() && first.is_none(),
                    "{text:?} as {expr}, words scored by {how}: {} notes against FTS5's {}, \
                     first difference at {first:?} (was SQLite compiled with fused \
                     multiply-adds? see .cargo/config.toml)",
                    got.len(),
                    want.len()
                );
            }
            // Each word alone, from the lengths, is its own `bm25()` too.
            let lengths = reader.doc_lengths().unwrap().expect("FTS5's records agree");
            for term in &query.terms {
                let one = term.to_fts();
                let alone = reader
                    .fts_all_scores(&one, BM25_WEIGHTS, &Filters::default())
                    .unwrap();
                let parts = reader
                    .phrase_scores(&one, BM25_WEIGHTS, &lengths)
                    .unwrap()
                    .expect("lengths of this transaction");
                assert_eq!(bits(&parts), bits(&alone), "{one}");
            }
            want.len()
        };
        let mut matched = 0;
        for _ in 0..150 {
            let n = 1 + rng.below(5);
            let mut text = rng.words(VOCABULARY, n);
            match rng.below(4) {
                0 => text.push_str(" fil*"),
                1 => text.push_str(" \"extract files\""),
                _ => {}
            }
            matched += same(&text);
        }
        assert!(matched > 150 * 50, "the queries match something: {matched}");
        for text in [
            "files files File",
            "nothingmatcheszz",
            "nothingmatcheszz rare",
            "ta* -xzf",
        ] {
            same(text);
        }
        assert!(remembered
            .all(
                &engine.index.read().unwrap(),
                &Query::parse("files -legacy")
            )
            .unwrap()
            .is_none());

        // Every score depends on every note: one more note with `files` changes them all.
        let before = same("files");
        std::fs::write(
            root.join("new.md"),
            "# zebra files\n\nfiles and more files\n",
        )
        .unwrap();
        engine.sync().unwrap();
        assert_eq!(same("files"), before + 1);
        same("zebra files list");

        // A note removed, then one edited in place to the same size and number of words:
        // each moves the version (the edit leaves FTS5's averages as they were).
        let holds = |word: &str| {
            (0..300)
                .map(|i| root.join(format!("n{i}.md")))
                .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(word)))
                .unwrap()
        };
        std::fs::remove_file(holds(" files ")).unwrap();
        assert_eq!(engine.sync().unwrap().removed, 1);
        assert_eq!(same("files"), before);
        let edited = holds(" files ");
        let text = std::fs::read_to_string(&edited).unwrap();
        std::fs::write(&edited, text.replacen(" files ", " zebra ", 1)).unwrap();
        assert_eq!(engine.sync().unwrap().updated, 1);
        same("files");
        same("zebra");
    }
}
