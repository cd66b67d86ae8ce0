//! "Did I already write this?" as engine operations: a draft (or a note) against the brain,
//! and the brain against itself. The stages live in [`crate::similar`].

use std::sync::Arc;

use super::Engine;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::index::{vectors, Reader};
use crate::similar::{
    self, ClustersResponse, Draft, SimilarRequest, SimilarResponse, Source, Vectors, MAX_TOP,
};

/// Draft passages compared at most (a 10 MB draft would otherwise take minutes to embed).
pub const MAX_DRAFT_PASSAGES: usize = 32;

/// What similar does without vectors: verdicts from shared words and titles.
const KEYWORDS_ONLY: &str = "verdicts from shared words and titles only";

impl Engine {
    /// The notes most like a draft or a note, each with a verdict. Reads only: the draft's
    /// passages are embedded in memory (or found among the stored vectors), never stored.
    pub fn similar(&self, req: &SimilarRequest) -> Result<SimilarResponse> {
        if req.top == 0 || req.top > MAX_TOP {
            return Err(Error::InvalidInput(format!(
                "--top must be between 1 and {MAX_TOP}, got {}",
                req.top
            )));
        }
        let max = self.config.max_file_bytes;
        // A draft that cannot be compared is refused before the index is touched: its
        // error is the answer, whatever state the index is in.
        let given = match &req.source {
            Source::Text(text) => {
                Given::Draft(Draft::parse(similar::DRAFT_NAME, text.as_bytes(), max)?)
            }
            Source::Path(path) => {
                crate::passage::check_path(path)?;
                Given::Note(path)
            }
        };
        let mut notices = Vec::new();
        if req.sync {
            notices.extend(self.sync_or_say_why()?.as_deref().map(super::behind_notice));
        }
        let behind = notices.len();
        let (draft, exclude) = match given {
            Given::Draft(draft) => (draft, None),
            Given::Note(path) => {
                if crate::passage::climbs_out(path) || path.starts_with('/') {
                    return Err(Error::InvalidInput(format!(
                        "{path} is outside the brain folder: give a note's path relative to it (lore/x.md), or compare the file's text as a draft"
                    )));
                }
                // Named as a link names it (`lore/x`, copied from `[[lore/x]]`): its note.
                let reader = self.index.read()?;
                let mut found = reader.note_id(path)?.map(|id| (path.to_string(), id));
                let named = crate::kb::links::named_files(path.trim_end_matches('/'));
                for target in named.into_iter().filter(|_| !path.ends_with(".md")) {
                    if found.is_some() {
                        break;
                    }
                    found = reader.note_id(&target)?.map(|id| (target, id));
                }
                // Typed in one Unicode form, named on disk in the other (`café.md`).
                if found.is_none() {
                    let held = crate::passage::note_rel(&self.config.root, path).ok();
                    if let Some(rel) = held.filter(|rel| rel != path) {
                        found = reader.note_id(&rel)?.map(|id| (rel, id));
                    }
                }
                drop(reader);
                let Some((path, id)) = found else {
                    // Over the size limit is the likeliest reason a file of the brain is not
                    // indexed, and the one a person cannot guess.
                    let meta = std::fs::metadata(self.config.root.join(path));
                    if meta.as_ref().is_ok_and(|m| m.is_dir()) {
                        return Err(Error::InvalidInput(format!(
                            "{path} is a folder, not a note: give one of the notes in it"
                        )));
                    }
                    // A FIFO, a socket, a device: reading it as a draft would block or make
                    // no sense, so the advice below is not given.
                    let odd = meta.as_ref().is_ok_and(|m| !m.is_file());
                    let size = meta.map(|m| m.len());
                    return Err(Error::InvalidInput(match size {
                        Ok(n) if n > max => format!(
                            "{path} is {:.2} MiB, over the {:.0} MiB limit (max_file_mb), so it is not indexed: raise max_file_mb, or compare a shorter draft",
                            crate::config::megabytes(n),
                            crate::config::megabytes(max)
                        ),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                            format!("{path}: no such file in the brain folder")
                        }
                        _ if odd => {
                            format!("{path}: not a file")
                        }
                        // Said for the CLI and the MCP tool alike: each names how to pass text.
                        _ => format!(
                            "{path} is not a note of the index (excluded, not markdown, or not synced yet): compare its text as a draft instead (brain similar - < {}; the MCP tool's text)",
                            shlex::try_quote(&self.config.root.join(path).to_string_lossy())
                                .unwrap_or_default()
                        ),
                    }));
                };
                let file = self.config.root.join(&path);
                // One byte past the limit is enough for the draft to say it is too large.
                // As `get` says it: a note of the index that cannot be read is the
                // machine's failure (exit 1), not bad input.
                let bytes = crate::file::read_file(&file, max.saturating_add(1))
                    .map_err(|e| crate::error::reading_note(&file, e))?;
                (Draft::of_note(&path, &bytes, max)?, Some(id))
            }
        };
        // As a search does: a note saved a moment ago is embedded first when it is a few
        // passages, else the notice says results by meaning may miss it.
        let mut semantic = self.semantic_ready(req.sync, &mut notices)?;
        // While this engine embeds (a backend: it keeps its matrix through its pass), the
        // note's passages in the matrix may not be those stored now, by the pass or by the
        // backend's request handler (`embed_few`): judged without them it is judged one
        // way, and its verdict changed a moment later (`duplicate of common/tar.md`, then
        // `related to 24 notes`) where a process without a backend gave the second at
        // once; judged on an edit's old passages, it is judged on text it no longer holds.
        // A note with no vector in either is left as it is (a fresh matrix would not hold
        // it either: a first index's pass would reload for nothing).
        if let (Some(id), Some((_, matrix))) = (exclude, &semantic) {
            if self.embedding_now() {
                let mut held: Vec<i64> = matrix
                    .rows_of_note(id)
                    .into_iter()
                    .map(|row| matrix.chunk_ids()[row])
                    .collect();
                held.sort_unstable();
                if held != self.index.read()?.embedded_chunks(id)? {
                    semantic = self.semantic_ready_as(false, true, &mut Vec::new())?;
                }
            }
        }
        let mut unreadable = false;
        // A draft mostly of tokens the model does not know (Chinese or Korean for MiniLM)
        // has passages that all look alike to it: any two such texts "align" near 1.0, so
        // the verdict comes from words and titles, as without a model.
        if let Some((embedder, _)) = &semantic {
            let unknown = embedder.unknown_share(&draft.text);
            if unknown >= crate::search::UNKNOWN {
                notices.push(format!(
                    "the model does not know {:.0}% of the draft's tokens: {KEYWORDS_ONLY}",
                    unknown * 100.0
                ));
                semantic = None;
                unreadable = true;
            }
        }
        let reader = self.index.read()?;
        // What was judged: a note whose passages are stored is scored both ways, with all
        // of them against each candidate; one still being embedded is judged from its side.
        let judged = match (exclude, &semantic) {
            (None, _) => similar::Judged::Draft,
            (Some(id), Some((_, matrix))) if !matrix.rows_of_note(id).is_empty() => {
                similar::Judged::NoteBothWays
            }
            (Some(_), _) => similar::Judged::NoteOneWay,
        };
        let draft_vecs = match &semantic {
            Some((embedder, _)) => {
                if draft.chunks.len() > MAX_DRAFT_PASSAGES {
                    let n = draft.chunks.len();
                    // Such a note's first passages only find the candidates.
                    notices.push(match judged {
                        similar::Judged::NoteBothWays => format!(
                            "the note has {n} passages: its first {MAX_DRAFT_PASSAGES} found the notes compared, each compared with all of them"
                        ),
                        similar::Judged::NoteOneWay => format!(
                            "the note has {n} passages; only the first {MAX_DRAFT_PASSAGES} were compared"
                        ),
                        similar::Judged::Draft => format!(
                            "the draft has {n} passages; only the first {MAX_DRAFT_PASSAGES} were compared"
                        ),
                    });
                }
                Some(draft_vectors(&reader, embedder, &draft)?)
            }
            None if unreadable => None,
            None => {
                without_model(&mut notices, KEYWORDS_ONLY);
                None
            }
        };
        let vectors = match (&semantic, &draft_vecs) {
            (Some((_, matrix)), Some(vecs)) => Some(Vectors {
                draft: vecs,
                matrix,
                remembered: &self.pair_words,
            }),
            _ => None,
        };
        let vectors_used = vectors.is_some();
        let mode = if vectors_used { "semantic" } else { "keywords" };
        let found = similar::run(
            &reader,
            &self.config.root,
            &draft,
            vectors,
            exclude,
            req.top,
            req.explain,
        )?;
        if let Some(n) = found.too_short {
            notices.push(format!(
                "the draft has {n} distinct word{} (of 3 letters or more, stopwords aside; a draft has {} or more): a note is its duplicate only if they share half their words, so the notes holding them are related; to find a note by a few words, use 'brain search'",
                if n == 1 { "" } else { "s" },
                similar::MIN_DRAFT_WORDS
            ));
        }
        // "new" from an empty index would be said with confidence and mean nothing.
        // An index that could not be synced says so first: that may be why it is empty
        // (`brain new` with a read-only data dir checked nothing, and said only "empty").
        if let Some(empty) = crate::search::empty_index_notice(&reader, &self.config)? {
            notices.truncate(behind);
            notices.push(empty);
        }
        Ok(SimilarResponse {
            verdict: found.verdict,
            summary: found.summary,
            results: found.results,
            mode: mode.into(),
            rule: similar::rule(vectors_used, judged),
            notice: (!notices.is_empty()).then(|| notices.join("; ")),
        })
    }

    /// Clusters of notes that duplicate each other, from the stored vectors (nothing is
    /// embedded), or without a model from titles that are the same words and notes that
    /// share half their words.
    pub fn similar_all(&self, sync: bool) -> Result<ClustersResponse> {
        let mut notices = Vec::new();
        if sync {
            notices.extend(self.sync_or_say_why()?.as_deref().map(super::behind_notice));
        }
        let behind = notices.len();
        // As a search does: a note saved a moment ago (a few passages) is embedded first,
        // so a copy just made is in the clusters; the rest of the matrix is reused.
        let semantic = self.semantic_ready(sync, &mut notices)?;
        let reader = self.index.read()?;
        let matrix = semantic.as_ref().map(|(_, m)| m.as_ref());
        let clusters = similar::find_clusters(&reader, matrix, &self.pair_words)?;
        if let Some(empty) = crate::search::empty_index_notice(&reader, &self.config)? {
            notices.truncate(behind);
            notices.push(empty);
        }
        let mode = match matrix {
            Some(_) => "semantic",
            None => {
                without_model(
                    &mut notices,
                    "only notes whose titles are the same words, one holding half the other's words, are grouped",
                );
                "keywords"
            }
        };
        Ok(ClustersResponse {
            clusters,
            mode: mode.into(),
            notice: (!notices.is_empty()).then(|| notices.join("; ")),
            total: None,
        })
    }
}

/// What a similar request compares, once checked.
enum Given<'a> {
    /// A draft, parsed.
    Draft(Draft),
    /// A note of the brain, by its path.
    Note(&'a str),
}

/// Says what `similar` does without vectors (`instead`) and why: no model (search's
/// "semantic search off" line, replaced), or a model whose vectors are not made yet (the
/// line saying so is kept; fetching the model again would not help).
fn without_model(notices: &mut Vec<String>, instead: &str) {
    let before = notices.len();
    notices.retain(|n| n != super::NO_MODEL_NOTICE);
    match notices.len() < before || notices.is_empty() {
        true => notices.push(format!(
            "no embedding model: {instead} (run 'brain model fetch')"
        )),
        false => notices.push(format!("{instead} until then")),
    }
}

/// The draft's passage vectors: stored ones where the brain has the same passage text,
/// the rest embedded now (in memory only).
fn draft_vectors(
    reader: &Reader<'_>,
    embedder: &Arc<dyn Embedder>,
    draft: &Draft,
) -> Result<Vec<Vec<f32>>> {
    let chunks = &draft.chunks[..draft.chunks.len().min(MAX_DRAFT_PASSAGES)];
    let mut out: Vec<Option<Vec<f32>>> = Vec::with_capacity(chunks.len());
    for c in chunks {
        let stored = reader.vector(&c.hash)?.and_then(|blob| {
            let mut v = Vec::with_capacity(embedder.dim());
            (vectors::extend_from_blob(&mut v, &blob) && v.len() == embedder.dim()).then_some(v)
        });
        out.push(stored);
    }
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let vectors =
        crate::embed::fill_missing(&texts, out, |missing| embedder.embed_unstored(missing))?;
    Ok(vectors
        .into_iter()
        .filter(|v| v.len() == embedder.dim())
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::similar::{SimilarRequest, SimilarResponse, Source};
    use crate::{Config, Engine};

    fn similar(engine: &Engine, path: &str) -> SimilarResponse {
        engine
            .similar(&SimilarRequest {
                source: Source::Path(path.into()),
                top: 5,
                explain: true,
                sync: false,
            })
            .unwrap()
    }

    /// A backend keeps its matrix through its embedding pass; a note edited and embedded
    /// meanwhile is not in the kept matrix, and was judged one way from it (the verdict
    /// changed once the matrix was reloaded). It is judged as a fresh process judges it.
    #[test]
    fn a_note_edited_during_a_pass_is_judged_on_its_stored_passages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        let write = |name: &str, text: &str| std::fs::write(root.join(name), text).unwrap();
        write(
            "lore/a.md",
            "# Tar\n\nExtract a tar archive with xzf and list it with tzf.\n",
        );
        write(
            "lore/b.md",
            "# Tar again\n\nExtract a tar archive with xzf, then list it.\n",
        );
        write(
            "lore/c.md",
            "# Ports\n\nForward a port over ssh with -L and a jump host.\n",
        );
        let mut config = Config::for_root(&root, dir.path().join("data"));
        config.model = "stand-in-hash-64".into();
        let engine = Engine::open(config.clone()).unwrap();
        engine.sync().unwrap();
        engine.embed_pending().unwrap();
        similar(&engine, "lore/b.md");

        // A pass runs (as the backend's does) while the note is edited and embedded.
        let _pass = engine.passes.begin();
        write(
            "lore/b.md",
            "# Ports again\n\nForward a port over ssh with -L, through a jump host.\n",
        );
        engine.sync().unwrap();
        engine.embed_pending().unwrap();
        let warm = similar(&engine, "lore/b.md");
        let fresh = similar(&Engine::open(config).unwrap(), "lore/b.md");
        assert_eq!(warm.results, fresh.results);
        assert_eq!(warm.results[0].path, "lore/c.md", "{warm:?}");
    }
}
