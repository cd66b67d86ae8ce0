//! One search, stage by stage, over a read transaction: the keyword list (with the query
//! embedding and the semantic scan on a thread of their own), the evidence, the fusion,
//! then presentation (and the explanation when asked). The engine supplies the transaction
//! and, when a model is ready, the embedder and the vector matrix; everything that decides
//! an order is here.

use super::bm25::{self, Bm25Hit};
use super::candidates::{self, Candidate};
use super::evidence::{self, Evidence};
use super::explain::{self, Explain, FusionStages};
use super::fuse::{self, Fused, Weights};
use super::present::{self, Ranked};
use super::query::{Query, Term, MAX_TERMS};
use super::semantic::{Matrix, NoteScores, Quantized, SemHit, RERANK_ROWS};
use super::term_scores::TermScores;
use super::{Filters, Fusion, Hit, Mode, SearchRequest, MAX_TOP};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::index::Reader;

/// The longest query accepted, in bytes; longer text is cut (a pasted essay ranks no better).
pub const MAX_QUERY_BYTES: usize = 10_000;

/// A loaded model and the vectors it can be searched with.
pub(crate) struct Semantic<'a> {
    /// Embeds the query.
    pub embedder: &'a dyn Embedder,
    /// Every passage vector.
    pub matrix: &'a Matrix,
}

/// What a search found, before the engine logs it.
pub(crate) struct Found {
    /// The mode that ranked (hybrid without a model ranks as bm25).
    pub mode: Mode,
    /// Best first, at most `top`.
    pub results: Vec<Hit>,
    /// The ranking stages, when asked for.
    pub explain: Option<Explain>,
    /// Lines for the person (a filter that matches no type, ...).
    pub notices: Vec<String>,
    /// What the hybrid fusion weighed for the first results, from the lists' first 50 (empty
    /// in the other modes).
    pub candidates: Vec<Candidate>,
    /// The query as parsed (flags resolved).
    pub query: Query,
    /// How many notes the keyword list found, when one ran (not in semantic mode).
    pub keywords: Option<usize>,
}

/// The query as parsed (flags resolved against the index), and the notes its excluded
/// words keep out of every list, not only the keyword one.
pub(crate) fn parse(
    reader: &Reader<'_>,
    text: &str,
) -> Result<(Query, std::collections::HashSet<i64>)> {
    let mut query = Query::parse(text);
    query.resolve_flags(|flag| used_as_flag(reader, flag))?;
    let excluded = match query.excluded_match() {
        Some(expr) => reader.fts_ids(&expr)?,
        None => Default::default(),
    };
    Ok((query, excluded))
}

/// Meaning hits read past the pool, to stand in for notes a kept matrix holds that are gone
/// from the index (see [`run`]).
const GONE_SPARE: usize = 16;

/// How many rows of the re-ranked notes (every row of each, the best notes first) are read
/// exactly beside the [`RERANK_ROWS`] best rows: a note of hundreds of passages, or any
/// note past the cap, keeps the whole-note part its codes give.
const RERANK_WHOLE_ROWS: usize = RERANK_ROWS;

/// The query's vector and the int8 scan of every passage: what needs no read transaction,
/// so it runs on its own thread while the keyword list is read.
struct Scan {
    query: Vec<f32>,
    scores: Vec<f32>,
    best: Vec<usize>,
    /// The rows scored, when the matrix's sketches shortlisted them, and the query as they
    /// were scored with; `None`: every row.
    rows: Option<(Vec<u32>, Quantized)>,
}

impl Scan {
    fn run(
        semantic: &Semantic<'_>,
        text: &str,
        allowed: Option<&std::collections::HashSet<i64>>,
    ) -> Result<Scan> {
        let query = semantic.embedder.embed_query(text)?;
        let m = semantic.matrix;
        // A filter already narrows the rows; the shortlist is for the search of everything.
        let rows = allowed
            .is_none()
            .then(|| m.shortlist(&query))
            .flatten()
            .map(|rows| (rows, m.quantized(&query)));
        let (scores, best) = match &rows {
            Some((rows, q)) => {
                let scores = m.scores_of_rows(q, rows);
                let best = m.best_rows_among(&scores, rows, RERANK_ROWS);
                (scores, best)
            }
            None => {
                let scores = m.scores(&query);
                let best = m.best_rows(&scores, RERANK_ROWS, allowed);
                (scores, best)
            }
        };
        Ok(Scan {
            query,
            scores,
            best,
            rows,
        })
    }

    /// The scan's best [`RERANK_ROWS`] rows scored again with their exact vectors, and
    /// every other row of their notes (up to [`RERANK_WHOLE_ROWS`] in all), whose sums
    /// make the whole-note part of a note's score: the ranked list is then the exact one,
    /// and the scores of the notes deeper down (used only as evidence) are within about
    /// 0.002 of it.
    fn exact<'a>(
        mut self,
        reader: &Reader<'_>,
        matrix: &'a Matrix,
        allowed: Option<&std::collections::HashSet<i64>>,
    ) -> Result<NoteScores<'a>> {
        // Best first, so that when the cap is reached it is the lower notes that keep the
        // whole-note part their codes give.
        self.best
            .sort_unstable_by(|&a, &b| self.scores[b].total_cmp(&self.scores[a]));
        let notes = matrix.notes_of_rows(&self.best, RERANK_WHOLE_ROWS);
        let mut rows: Vec<usize> = self.best.clone();
        rows.extend(
            notes
                .iter()
                .flat_map(|(_, of)| of.iter().map(|&r| r as usize)),
        );
        rows.sort_unstable();
        rows.dedup();
        let ids: Vec<i64> = rows.iter().map(|&r| matrix.chunk_ids()[r]).collect();
        let exact = reader.vectors_of(&ids)?;
        let dim = self.query.len();
        let vector = |row: usize| {
            exact
                .get(&matrix.chunk_ids()[row])
                .filter(|v| v.len() == dim)
        };
        for &row in &rows {
            if let Some(v) = vector(row) {
                self.scores[row] = super::semantic::dot(v, &self.query);
            }
        }
        let mut lengths = std::collections::HashMap::new();
        let mut sum = vec![0f32; dim];
        'notes: for (slot, of) in notes {
            sum.iter_mut().for_each(|x| *x = 0.0);
            for &r in of {
                // A vector missing from the index (changed since the matrix was loaded):
                // that note keeps the length from its codes.
                let Some(v) = vector(r as usize) else {
                    continue 'notes;
                };
                sum.iter_mut().zip(v).for_each(|(a, x)| *a += x);
            }
            lengths.insert(slot, super::semantic::dot(&sum, &sum).sqrt());
        }
        let scores = match self.rows {
            Some((rows, q)) => matrix.note_scores_among(&self.scores, &rows, q),
            None => matrix.note_scores(&self.scores, allowed),
        };
        Ok(scores.with_exact_lengths(lengths))
    }
}

/// `query`'s words without its exclusions.
fn positive(query: &Query) -> Query {
    Query {
        terms: query.terms.clone(),
        ..Default::default()
    }
}

/// What a keyword search that found nothing says when its words are in notes but every
/// such note holds an excluded word (filters aside, which say their own). One FTS5 lookup.
fn excluded_notice(
    reader: &Reader<'_>,
    query: &Query,
    filters: &Filters,
) -> Result<Option<String>> {
    if query.excludes.is_empty() || !filters.is_empty() || !held_anywhere(reader, &positive(query))?
    {
        return Ok(None);
    }
    Ok(Some(
        "every note that holds the query's words holds an excluded one too".to_string(),
    ))
}

/// What a hybrid search says when no note holds any word of the query.
const NO_KEYWORD_MATCH: &str =
    "no note holds any word of the query: these are only the notes nearest in meaning (a typo?)";

/// The first term that matches only as written ([`Term::is_phrase`]): a quoted phrase, or
/// words joined by punctuation.
fn first_phrase(query: &Query) -> Option<&Term> {
    query.terms.iter().find(|t| t.is_phrase())
}

/// What a search whose keyword list came back empty says about a phrase in the query: its
/// words may well be in notes, only not together as written (`keywords_only`: no list by
/// meaning stands in for the keyword list). Nothing when some note matches the query's
/// words after all, so that a filter or an exclusion is why instead, nor when no note
/// holds the phrase's words apart either (a typo: dropping the quotes would find nothing
/// more). At most two FTS5 lookups, on a search that found no keyword hit.
fn phrase_notice(
    reader: &Reader<'_>,
    query: &Query,
    keywords_only: bool,
) -> Result<Option<String>> {
    let Some(phrase) = first_phrase(query) else {
        return Ok(None);
    };
    if held_anywhere(reader, &positive(query))? {
        return Ok(None);
    }
    if !held_anywhere(reader, &Query::words_apart(&phrase.text))? {
        return Ok(None);
    }
    let others = match query.terms.len() {
        1 => "",
        _ => " (nor any other word of the query)",
    };
    let nearest = match keywords_only {
        true => "",
        false => ": these are only the notes nearest in meaning",
    };
    Ok(Some(match phrase.quoted {
        true => format!(
            "no note holds the phrase \"{}\"{others}{nearest}; without the quotes, notes \
             holding its words apart match too",
            quoted_part(&phrase.text)
        ),
        // `retry/jitter`: FTS5 reads words joined by punctuation as one phrase.
        false => {
            let core = quoted_part(phrase.core());
            let star = if phrase.prefix { "*" } else { "" };
            let spaced = format!("{}{star}", quoted_part(&Query::spaced(phrase.core())));
            format!(
                "no note holds \"{core}\" as written, its words together{others}{nearest}; \
                 with spaces between them ({spaced}), notes holding its words apart match too"
            )
        }
    }))
}

/// Longest part of the query a notice quotes, in characters: a paragraph pasted as a query
/// (an assistant's, say) is one line of notice, not the paragraph twice over.
const NOTICE_QUOTE_CHARS: usize = 60;

/// `text` as a notice quotes it: cut to [`NOTICE_QUOTE_CHARS`], `...` saying so.
fn quoted_part(text: &str) -> String {
    super::snippet::truncate(text, NOTICE_QUOTE_CHARS)
}

/// What a hybrid search whose keyword list came back empty says of its results, the notes
/// nearest in meaning: that no note holds a word of the query (a typo?) only when that is
/// so; else why keywords found nothing here: a phrase not held as written, the filters, or
/// the excluded words. One FTS5 lookup (two with a phrase), on this path only.
fn no_keyword_notice(reader: &Reader<'_>, query: &Query, filters: &Filters) -> Result<String> {
    if !held_anywhere(reader, &words_of(query))? {
        return Ok(NO_KEYWORD_MATCH.to_string());
    }
    if let Some(phrase) = phrase_notice(reader, query, false)? {
        return Ok(phrase);
    }
    let nearest = "these are only the notes nearest in meaning";
    Ok(match (filters.is_empty(), query.excludes.is_empty()) {
        (false, _) => format!("no note the filters keep matches the query's words: {nearest}"),
        (true, false) => {
            format!("no note matches the query's words without an excluded one: {nearest}")
        }
        (true, true) => NO_KEYWORD_MATCH.to_string(),
    })
}

/// The query's words, a phrase's apart: what to ask whether any of them is in some note.
fn words_of(query: &Query) -> Query {
    let terms = query
        .terms
        .iter()
        .flat_map(|t| match (t.quoted, t.is_phrase()) {
            // Read again unquoted: its words, and a CJK run's character pairs.
            (true, _) => Query::parse(&t.text).terms,
            // Joined by punctuation (`retry/jitter`): its words apart.
            (false, true) => Query::words_apart(t.core()).terms,
            (false, false) => vec![t.clone()],
        })
        .collect();
    Query {
        terms,
        ..Default::default()
    }
}

/// What a search says when the query had more words than [`MAX_TERMS`]: the rest were
/// dropped (they add time, not ranking), and the person should know.
pub(crate) fn capped_notice() -> String {
    format!("only the first {MAX_TERMS} words of the query were searched for as keywords")
}

/// Checks a request and returns the query text to use (cut to [`MAX_QUERY_BYTES`]).
pub(crate) fn validate(req: &SearchRequest) -> Result<&str> {
    if req.query.trim().is_empty() {
        return Err(Error::InvalidInput(
            "empty query: say what to search for".into(),
        ));
    }
    // `"`, `*`, `()`, an emoji: nothing for keywords (the tokenizer keeps letters and
    // digits only), and meaning would rank notes by noise (the model reads an emoji as an
    // unknown token: every emoji gave the same three notes).
    if !req.query.chars().any(char::is_alphanumeric) {
        return Err(Error::InvalidInput(format!(
            "the query {} has no words, only punctuation, symbols or control characters: say what to search for",
            quoted(&req.query)
        )));
    }
    if req.top == 0 || req.top > MAX_TOP {
        return Err(Error::InvalidInput(format!(
            "--top must be between 1 and {MAX_TOP}, got {}",
            req.top
        )));
    }
    Ok(crate::text::cut_at_char(&req.query, MAX_QUERY_BYTES))
}

/// A query shown in a message as typed (its first [`NOTICE_QUOTE_CHARS`] characters), in
/// quotes that it does not hold itself (`'-"a b"'`), with control characters escaped so that
/// none reaches the terminal.
fn quoted(query: &str) -> String {
    let shown: String = quoted_part(query)
        .chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect();
    match shown.contains('"') && !shown.contains('\'') {
        true => format!("'{shown}'"),
        false => format!("\"{shown}\""),
    }
}

/// Runs `req` (whose text, validated, is `text`) against `reader`. Without `semantic`,
/// hybrid ranks by keywords alone.
pub(crate) fn run(
    reader: &Reader<'_>,
    config: &Config,
    req: &SearchRequest,
    text: &str,
    semantic: Option<Semantic<'_>>,
    fusion: Fusion,
    remembered: Option<&TermScores>,
) -> Result<Found> {
    let (mut query, excluded) = parse(reader, text)?;
    // Meaning reads the text as typed: only the keyword list is told about a word half typed.
    let typing = match req.as_you_type && req.mode != Mode::Semantic {
        true => complete_last_word(reader, text, &mut query)?,
        false => false,
    };
    // Keywords would find nothing, and meaning would rank notes by the words the person
    // asked to leave out.
    if query.terms.is_empty() && !query.excludes.is_empty() {
        return Err(Error::InvalidInput(format!(
            "the query {} only excludes: add a word to search for",
            quoted(text)
        )));
    }
    let mode = if semantic.is_some() {
        req.mode
    } else {
        Mode::Bm25
    };
    // Hybrid fuses deeper lists than it shows: a note third in both lists may be first.
    let pool = if mode == Mode::Hybrid {
        (4 * req.top).max(50)
    } else {
        req.top
    };
    let allowed = match &semantic {
        Some(_) => reader.allowed(&req.filters)?,
        None => None,
    };
    // The query embedding and the scan overlap the keyword list: at 100k notes each
    // takes tens of milliseconds, and hybrid would otherwise pay their sum.
    let (bm25_hits, scan) = std::thread::scope(|threads| {
        let scan = semantic.as_ref().map(|s| {
            let allowed = allowed.as_ref();
            threads.spawn(move || Scan::run(s, text, allowed))
        });
        let bm25_hits = match mode {
            Mode::Semantic => Ok(Default::default()),
            _ => bm25::search(reader, &query, &req.filters, pool, remembered),
        };
        // A panic there is one here, as it was before the scan had its own thread.
        let scan = scan.map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        (bm25_hits, scan.transpose())
    });
    let ((bm25_hits, keyword_scores), scan) = (bm25_hits?, scan?);
    let sem_scores = match (&semantic, scan) {
        (Some(s), Some(scan)) => scan.exact(reader, s.matrix, allowed.as_ref())?,
        _ => NoteScores::default(),
    };
    let mut sem_hits = Vec::with_capacity(pool);
    // A few more than the pool, for notes found gone below.
    for h in sem_scores.top(pool + excluded.len() + GONE_SPARE) {
        // A matrix kept while new passages are embedded (the backend keeps one for a few
        // seconds) still holds notes deleted since, or saved again under a new id: no hit,
        // and no score to scale the others by.
        if !excluded.contains(&h.note_id) && reader.has_note(h.note_id)? {
            sem_hits.push(h);
        }
    }
    sem_hits.truncate(pool);
    // The head of the answer comes from lists as deep as the default --top reads,
    // whatever --top is: asking for more results shows more, and does not reorder the
    // first (a deeper meaning list lowers the range its scores are scaled over).
    const HEAD_POOL: usize = bm25::MIN_POOL;
    let (bm25_head, sem_head) = (
        &bm25_hits[..bm25_hits.len().min(HEAD_POOL)],
        &sem_hits[..sem_hits.len().min(HEAD_POOL)],
    );

    let mut stages = None;
    let mut candidates = Vec::new();
    let ranked: Vec<Ranked> = match mode {
        Mode::Bm25 => bm25_hits.iter().enumerate().map(Ranked::keyword).collect(),
        Mode::Semantic => sem_hits.iter().enumerate().map(Ranked::semantic).collect(),
        Mode::Hybrid => {
            let evidence = gather_evidence(reader, &query, bm25_head, sem_head, remembered)?;
            // Keyword #1 holds every literal of the query (see `Weights::from_literal`).
            let literal_top = bm25_hits
                .first()
                .is_some_and(|h| h.exact == super::bm25::Exact::Identifier);
            // Only with a keyword list to hand the order to (a tokenisation of the query).
            let unknown = match (&semantic, bm25_hits.is_empty()) {
                (Some(s), false) => s.embedder.unknown_share(text),
                _ => 0.0,
            };
            let weights = match unknown >= fuse::UNKNOWN {
                true => Weights::from_unknown(unknown),
                false => Weights::choose(&evidence, literal_top),
            }
            .with_literals_first(query.only_literals());
            let head = candidates::gather(&keyword_scores, bm25_head, sem_head, &sem_scores);
            let mut fused = fuse::fuse(&head, &weights);
            let by_rrf = |fused: &mut [Fused]| {
                if fusion == Fusion::Rrf {
                    fused.sort_by(|a, b| b.rrf.total_cmp(&a.rrf).then(a.note_id.cmp(&b.note_id)));
                }
            };
            by_rrf(&mut fused);
            let head_len = fused.len();
            if bm25_head.len() < bm25_hits.len() || sem_head.len() < sem_hits.len() {
                // The rest, ranked over the whole lists, after the head.
                let all = candidates::gather(&keyword_scores, &bm25_hits, &sem_hits, &sem_scores);
                let shown: std::collections::HashSet<i64> =
                    fused.iter().map(|f| f.note_id).collect();
                let mut rest = fuse::fuse(&all, &weights);
                rest.retain(|f| !shown.contains(&f.note_id));
                by_rrf(&mut rest);
                fused.extend(rest);
            }
            // What decided the head (the results a default --top shows): replayed by
            // `eval --dump`'s fusion studies, it gives the same order.
            candidates = head;
            let ranked = fused.iter().map(Ranked::fused).collect();
            if req.explain {
                stages = Some(FusionStages {
                    evidence,
                    weights,
                    fused,
                    head: head_len,
                    scale: fuse::Scale::of(&candidates),
                });
            }
            ranked
        }
    };

    let mut results = Vec::with_capacity(req.top);
    for r in &ranked {
        if results.len() == req.top {
            break;
        }
        // A note gone since the lists were read leaves its place to the next.
        if let Some(hit) = present::hit(reader, &config.root, &query, r)? {
            results.push(hit);
        }
    }
    let mut notices = Vec::new();
    if text.len() < req.query.len() {
        notices.push(format!(
            "the query is {} bytes: only its first {MAX_QUERY_BYTES} were searched for",
            req.query.len()
        ));
    }
    if query.capped {
        notices.push(capped_notice());
    }
    if query.only_stopwords() && !req.as_you_type && mode != Mode::Semantic {
        notices.push(
            "every word of the query is too common to search by (the, of, how...): add one \
             that says what the note is about"
                .to_string(),
        );
    }
    if !req.as_you_type {
        notices.extend(word_flag_notice(reader, &query)?);
    }
    if query.unclosed_quote && !req.as_you_type {
        notices.push(
            "a quote in the query is not closed: what follows it was read as one phrase"
                .to_string(),
        );
    }
    // Meaning always has nearest notes, even for a typo or words no note uses: say that
    // these are only that, or the first of them reads as the answer.
    if mode == Mode::Hybrid && bm25_hits.is_empty() && !results.is_empty() && !typing {
        notices.push(no_keyword_notice(reader, &query, &req.filters)?);
    }
    let mut said_why = false;
    // A filter naming a type or tag no note has, said once the rest is.
    let unknown_filter = match results.is_empty() {
        true => filter_notice(reader, &req.filters)?,
        false => None,
    };
    if mode == Mode::Bm25 && results.is_empty() {
        let why = match phrase_notice(reader, &query, true)? {
            Some(phrase) => Some(phrase),
            None => match excluded_notice(reader, &query, &req.filters)? {
                Some(excluded) => Some(excluded),
                None if unknown_filter.is_some() => None,
                None => filtered_out_notice(reader, &query, &req.filters)?,
            },
        };
        said_why = why.is_some();
        notices.extend(why);
    }
    if results.is_empty() {
        let empty = empty_index_notice(reader, config)?;
        // A word in no note at all (a typo?) is said, as hybrid says it: keyword mode
        // printed an empty list and nothing else.
        if mode == Mode::Bm25
            && !said_why
            && empty.is_none()
            && !typing
            && !query.terms.is_empty()
            && !held_anywhere(reader, &words_of(&query))?
        {
            notices.push("no note holds any word of the query (a typo?)".to_string());
        }
        notices.extend(empty);
        notices.extend(unknown_filter);
    }
    let explain = match req.explain {
        true => Some(explain::Explain {
            excluded: query.excludes.iter().map(|t| t.label()).collect(),
            ..explain::build(reader, mode, &bm25_hits, &sem_hits, stages, req.top)?
        }),
        false => None,
    };
    Ok(Found {
        keywords: (mode != Mode::Semantic).then_some(bm25_hits.len()),
        mode,
        results,
        explain,
        notices,
        candidates,
        query,
    })
}

/// For a short dash word that reads as a word (`-herd`, `-todo`: three or four letters)
/// and that no note writes as a flag: the query searched for it as a flag, as it does for
/// `tar -xzf`, though the person may have meant "without herd"; said, with how to say
/// that instead. Longer ones (`-legacy`) exclude unless some note has them as a flag.
fn word_flag_notice(reader: &Reader<'_>, query: &Query) -> Result<Option<String>> {
    for t in query.terms.iter().filter(|t| t.is_flag() && !t.quoted) {
        let Some(word) = t.text.strip_prefix('-').filter(|w| !w.starts_with('-')) else {
            continue;
        };
        let wordlike = (3..=crate::search::query::FLAG_CLUSTER).contains(&word.chars().count())
            && word.chars().all(|c| c.is_ascii_lowercase());
        if wordlike && !used_as_flag(reader, &t.text)? {
            return Ok(Some(format!(
                "{} was searched for as a flag, as in 'tar -xzf'; to leave out the notes with {word}, write -\"{word}\"",
                t.text
            )));
        }
    }
    Ok(None)
}

/// Whether some note writes `flag` (`-version`) as a flag: then the person typing it
/// means the flag, not "without the word version".
fn used_as_flag(reader: &Reader<'_>, flag: &str) -> Result<bool> {
    let probe = Query::parse(&format!("\"{}\"", flag.trim_start_matches('-')));
    let Some(expr) = probe.to_match() else {
        return Ok(false);
    };
    Ok(reader
        .fts_bodies(&expr, FLAG_PROBE)?
        .iter()
        .any(|body| bm25::contains_literal(body, flag)))
}

/// Letters and digits the last word of an as-you-type search ends with before it is
/// searched as the start of a word: `ku*` reads the postings of every word that starts so,
/// and so would `os.p`, whose `*` applies to `p` alone.
const MIN_TYPED_PREFIX: usize = 3;

/// For a search typed in the panel: whether its last word may still be being typed (one
/// letter, or the start of a word some note holds but no note holds as it is), in which
/// case the panel does not yet say that no note holds any word of the query. Such a word of
/// [`MIN_TYPED_PREFIX`] letters or more is searched as that start (`kuberne*`), so keywords
/// find the note before the word is finished; one typed past the stem the index holds
/// (`migratio`) as the start up to [`STEM_SLACK`] letters shorter that some note holds
/// (`migrat*`). A word notes hold (`doc`) stays that word,
/// and so does the start of a stop word (`wha`), which would match half the notes and be
/// dropped once finished. A finished query (the CLI, MCP, `brain eval`) is never changed.
fn complete_last_word(reader: &Reader<'_>, text: &str, query: &mut Query) -> Result<bool> {
    // The last word typed, not the last one searched for: after `kuberne the` or
    // `kuberne -docker`, `kuberne` is finished.
    let typed_last = text.split_whitespace().last().unwrap_or("");
    let Some(last) = query
        .terms
        .last_mut()
        .filter(|t| typed_word(t) && t.text == typed_last)
    else {
        return Ok(false);
    };
    // The token the `*` would apply to.
    let tail = last
        .text
        .rsplit(|c: char| !c.is_alphanumeric())
        .find(|s| !s.is_empty())
        .unwrap_or("");
    let letters = tail.chars().count();
    if letters < 2 {
        return Ok(true);
    }
    if matches_any(reader, last.clone())? {
        return Ok(false);
    }
    // The index holds stems (`migrat` of `migration`, `run` of `running`): a word typed
    // past its stem (`migratio`) is no start of anything, but a shorter start is.
    let slack = match last.text.ends_with(tail) {
        true => STEM_SLACK.min(letters.saturating_sub(MIN_TYPED_PREFIX)),
        false => 0,
    };
    for cut in 0..=slack {
        let kept: String = {
            let keep = last.text.chars().count() - cut;
            last.text.chars().take(keep).collect()
        };
        let start = Term {
            text: kept,
            prefix: true,
            ..last.clone()
        };
        if cut > 0 && !stem_ending(&tail.to_lowercase(), cut) {
            continue;
        }
        if matches_any(reader, start.clone())? {
            let kept_tail: String = tail.chars().take(letters - cut).collect();
            if letters - cut >= MIN_TYPED_PREFIX
                && !super::query::starts_stopword(&kept_tail.to_lowercase())
            {
                *last = start;
            }
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the last `cut` letters of `word` (lowercase) may be the start of an ending the
/// stemmer removes (`io` of `-ion`, `nin` of `running`'s doubled `n` and `-ing`): only then
/// is the start `cut` letters shorter tried, so a word no note holds (`teleport`) is not
/// made the start of unrelated ones (`telep*`, `telephone`).
fn stem_ending(word: &str, cut: usize) -> bool {
    const ENDINGS: &[&str] = &[
        "ing", "ed", "er", "es", "ies", "ion", "ation", "ational", "ition", "ment", "ness", "ity",
        "ive", "ize", "ise", "able", "ible", "ance", "ence", "al", "ally", "ful", "ous", "ly",
    ];
    let chars: Vec<char> = word.chars().collect();
    let Some(split) = chars.len().checked_sub(cut).filter(|&s| s > 0) else {
        return false;
    };
    let ending: String = chars[split..].iter().collect();
    let starts_ending = |e: &str| ENDINGS.iter().any(|x| x.starts_with(e));
    // `runnin`: `run` + `n` + `in`, the consonant doubled before the ending.
    let doubled = chars[split] == chars[split - 1]
        && ending.len() > chars[split].len_utf8()
        && starts_ending(&ending[chars[split].len_utf8()..]);
    starts_ending(&ending) || doubled
}

/// Letters a word half typed may have gone past the stem the index holds for the word it
/// starts (`migratio` of `migrat`, `runnin` of `run`): enough for the stemmer's common
/// endings, few enough that a word no note holds (`teleport`) does not become the start of
/// others (`tele*`).
const STEM_SLACK: usize = 3;

/// A plain word as typed: not a phrase, a prefix, a flag or a pair cut from a CJK run.
fn typed_word(t: &Term) -> bool {
    !t.quoted && !t.prefix && !t.is_flag() && t.part_of.is_none()
}

/// Whether some note matches `term`: one FTS5 lookup.
fn matches_any(reader: &Reader<'_>, term: Term) -> Result<bool> {
    let probe = Query {
        terms: vec![term],
        ..Default::default()
    };
    held_anywhere(reader, &probe)
}

/// Whether some note, whatever the filters, matches any term of `query`: one FTS5 lookup.
fn held_anywhere(reader: &Reader<'_>, query: &Query) -> Result<bool> {
    match query.to_match() {
        Some(expr) => reader.fts_any(&expr),
        None => Ok(false),
    }
}

/// Notes read to decide whether a long dash word is a flag.
const FLAG_PROBE: usize = 200;

/// How rare the query's words are, which of them the keyword list's best note holds, and
/// how peaked each list is.
fn gather_evidence(
    reader: &Reader<'_>,
    query: &Query,
    bm25: &[Bm25Hit],
    sem: &[SemHit],
    remembered: Option<&TermScores>,
) -> Result<Evidence> {
    let total = reader.note_count()?;
    let terms = evidence::term_stats(
        reader,
        query,
        bm25.first().map(|h| h.note_id),
        total,
        remembered,
    )?;
    let bm25_scores: Vec<f64> = bm25.iter().map(|h| h.score).collect();
    let sem_scores: Vec<f32> = sem.iter().map(|h| h.score).collect();
    Ok(Evidence {
        bm25_hits: bm25.len(),
        bm25_lead: evidence::lead(&bm25_scores),
        bm25_peak: evidence::peak(&bm25_scores),
        coverage: evidence::coverage(&terms),
        sem_gap: evidence::gap(&sem_scores),
        terms,
    })
}

/// One line for a search or similar over an index with no notes, saying why and what to
/// do; `None` when it holds some.
pub(crate) fn empty_index_notice(reader: &Reader<'_>, config: &Config) -> Result<Option<String>> {
    if reader.note_count()? > 0 {
        return Ok(None);
    }
    Ok(Some(WhyEmpty::of(config).notice(config)))
}

/// Why an index holds no notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyEmpty {
    /// The brain folder holds no `.md` file.
    NoFiles,
    /// It does, and the exclude patterns or a `.brainignore` skip every one.
    AllSkipped,
    /// It holds notes the index has not taken (not synced, or each refused with a warning).
    NotIndexed,
}

impl WhyEmpty {
    /// Looks at the folder (a walk, a stat per file: asked only of an empty index).
    pub fn of(config: &Config) -> WhyEmpty {
        if !crate::index::walk::holds_any_note(&config.root) {
            WhyEmpty::NoFiles
        } else if crate::index::walk::walk(config).is_ok_and(|w| {
            // A folder not read, or a name not readable, would be the warnings' to say.
            w.files.is_empty() && w.warnings.is_empty() && w.unreadable.is_empty()
        }) {
            WhyEmpty::AllSkipped
        } else {
            WhyEmpty::NotIndexed
        }
    }

    /// The line a person reads.
    pub fn notice(self, config: &Config) -> String {
        let root = config.root.display();
        match self {
            WhyEmpty::NoFiles => format!(
                "the brain folder {root} holds no notes yet (no .md files): write one, or \
                 point BRAIN_DIR (or root in the config file) at your notes"
            ),
            WhyEmpty::AllSkipped => format!(
                "every .md file in {root} is skipped, by the exclude patterns{} or a \
                 .gitignore, .ignore or .brainignore: write notes outside them, or change exclude in \
                 the config file",
                match config.exclude.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", config.exclude.join(", ")),
                }
            ),
            WhyEmpty::NotIndexed => "the index holds no notes: run 'brain index' (its \
                                     warnings say why a note is skipped)"
                .to_string(),
        }
    }
}

/// What a keyword search that found nothing says when its words are in notes, but only in
/// notes its filters leave out (hybrid says it beside its nearest notes): a bare "(no
/// results)" read as words no note holds. The caller asks only when no filter names a
/// type or tag no note has, which [`filter_notice`] says.
fn filtered_out_notice(
    reader: &Reader<'_>,
    query: &Query,
    filters: &Filters,
) -> Result<Option<String>> {
    if filters.is_empty() || !held_anywhere(reader, &positive(query))? {
        return Ok(None);
    }
    Ok(Some(
        "no note the filters keep holds the query's words: notes outside them do".to_string(),
    ))
}

/// When a filter names a type that no note has, say so: a typo in `--type` should not
/// look like an empty brain.
fn filter_notice(reader: &Reader<'_>, filters: &Filters) -> Result<Option<String>> {
    if let Some(tag) = &filters.tag {
        if !reader.has_tag(tag)? {
            return Ok(Some(format!(
                "no note is tagged {:?} (tags come from the notes' frontmatter `tags:`)",
                tag.trim_start_matches('#')
            )));
        }
    }
    let Some(kind) = &filters.kind else {
        return Ok(None);
    };
    let types = reader.types()?;
    if types.iter().any(|t| t.eq_ignore_ascii_case(kind)) {
        return Ok(None);
    }
    Ok(Some(format!(
        "no notes of type {kind:?}; types here: {}",
        types.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::stem_ending;

    #[test]
    fn only_a_stemmer_ending_is_cut_from_a_half_typed_word() {
        for (word, cut) in [
            ("migratio", 2),
            ("configura", 1),
            ("configurati", 3),
            ("runnin", 3),
        ] {
            assert!(stem_ending(word, cut), "{word} - {cut}");
        }
        for cut in 1..=3 {
            assert!(!stem_ending("teleport", cut), "teleport - {cut}");
            assert!(!stem_ending("kubernetx", cut), "kubernetx - {cut}");
        }
        // Nothing left, or more cut than there is: never.
        assert!(!stem_ending("ing", 3));
        assert!(!stem_ending("in", 3));
        assert!(stem_ending("ǆing", 3), "one letter of two bytes left");
    }
}
