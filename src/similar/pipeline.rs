//! One similar request over a read transaction: the draft's rare words, its passages
//! aligned with every note's, the candidates from both, their shared words, a verdict each.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::between::{Pairs, Remembered};
use super::draft::Draft;
use super::evidence::{self, Alignment, PairEvidence};
use super::terms;
use super::{summary, verdict, SimilarHit, Verdict};
use crate::error::Result;
use crate::index::{Filters, FtsQuery, Reader};
use crate::search::{Matrix, BM25_WEIGHTS};

/// Candidates taken from the passage alignment: as many as `--top` may show. (It was 30,
/// and with the rare words' at most 16, `--top 50` showed 36 to 46 notes in a brain of
/// thousands, without a word.)
const BY_MEANING: usize = super::MAX_TOP;
/// Candidates taken from the rare words.
const BY_WORDS: usize = 15;

/// The draft's passage vectors and the brain's.
pub(crate) struct Vectors<'a> {
    /// One per draft passage, in order.
    pub draft: &'a [Vec<f32>],
    /// Every passage of the brain.
    pub matrix: &'a Matrix,
    /// What scoring two notes of the brain both ways reads, kept between requests.
    pub remembered: &'a Remembered,
}

/// What [`run`] found.
pub(crate) struct Similar {
    /// The draft's verdict.
    pub verdict: Verdict,
    /// Its line.
    pub summary: String,
    /// Best first.
    pub results: Vec<SimilarHit>,
    /// The draft's distinct words, when it has too few to duplicate a note
    /// ([`verdict::MIN_DRAFT_WORDS`]) and that kept a note from being called so.
    pub too_short: Option<usize>,
}

/// Compares `draft` with every note but `exclude` (the note itself, when the draft is one).
pub(crate) fn run(
    reader: &Reader<'_>,
    root: &Path,
    draft: &Draft,
    vectors: Option<Vectors<'_>>,
    exclude: Option<i64>,
    top: usize,
    explain: bool,
) -> Result<Similar> {
    let total = reader.note_count()?;
    let (rare, words) = terms::draft_terms(reader, &draft.text, total, exclude.is_some())?;
    let weights: Vec<f64> = draft.chunks.iter().map(|c| c.text.len() as f64).collect();
    let aligned: HashMap<i64, Alignment> = match &vectors {
        Some(v) => evidence::align(v.matrix, v.draft, exclude),
        None => HashMap::new(),
    };
    let weights = &weights[..vectors.as_ref().map_or(0, |v| v.draft.len())];
    let too_short = exclude.is_none() && words.len() < verdict::MIN_DRAFT_WORDS;
    let mut demoted = false;

    let mut ids: Vec<i64> = Vec::new();
    let mut seen: HashSet<i64> = HashSet::new();
    let mut by_meaning: Vec<(i64, f64)> = aligned
        .iter()
        .map(|(&id, a)| (id, a.draft_covered(weights)))
        .collect();
    by_meaning.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (id, _) in by_meaning.into_iter().take(BY_MEANING) {
        if seen.insert(id) {
            ids.push(id);
        }
    }
    // The notes holding most rare words; and without vectors, those whose titles hold the
    // draft's title words: nothing else finds a note whose title says the draft's in
    // common words, and its title likeness would never be measured.
    let title_words = match vectors {
        None => terms::title_words(&draft.title),
        Some(_) => None,
    };
    for expr in [terms::any_of(&rare), title_words].into_iter().flatten() {
        let q = FtsQuery {
            expr: &expr,
            weights: BM25_WEIGHTS,
            named: None,
            limit: BY_WORDS + 1,
        };
        for row in reader.fts_match(&q, &Filters::default())? {
            if Some(row.note_id) != exclude && seen.insert(row.note_id) {
                ids.push(row.note_id);
            }
        }
    }
    let held = terms::presence(reader, &rare, &ids)?;
    let texts = reader.lower_texts(&ids, true)?;

    // A note of the brain: each candidate scored both ways, as `--all` scores a pair.
    let mut pairs = match (&vectors, exclude) {
        (Some(v), Some(_)) => Some(Pairs::new(reader, v.matrix, v.remembered)?),
        _ => None,
    };
    let mut scored = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(row) = reader.note(id)? else {
            continue;
        };
        let al = aligned.get(&id);
        let text = texts
            .get(&id)
            .map(|(title, body)| format!("{title}\n{body}"))
            .unwrap_or_default();
        let ev = evidence::pair_evidence(
            &rare,
            held.get(&id).map(Vec::as_slice),
            al,
            weights,
            (&draft.title, &row.title),
            words.overlap(&text),
        );
        let line = match al.map(|a| a.best_chunk) {
            Some(chunk) => reader.chunk(chunk)?.map_or(row.body_line, |c| c.line),
            None => row.body_line,
        };
        let two = match (&mut pairs, exclude) {
            (Some(p), Some(me)) => p.score(me, id)?,
            _ => None,
        };
        // Two notes of the brain: the evidence shown (and the likeness) is what scored
        // them, every passage of each weighed alike (a draft's are weighed by length, and
        // only a long note's first passages are read for it).
        let ev = match &two {
            Some(w) => PairEvidence {
                words: ev.words,
                both_ways: Some(w.each),
                ..w.evidence.clone()
            },
            None => ev,
        };
        scored.push((
            verdict::score(&ev),
            verdict::likeness(&ev),
            row,
            ev,
            line,
            two,
        ));
    }
    if let Some(p) = pairs {
        p.remember();
    }
    let raw: Vec<f64> = scored.iter().map(|s| s.1).collect();
    let likeness = verdict::with_lead(&raw);
    let round = |x: f64| (x * 1e4).round() / 1e4;
    let mut results: Vec<SimilarHit> = scored
        .into_iter()
        .zip(likeness)
        .map(|(((score, t), raw, row, mut ev, line, two), likeness)| {
            ev.lead = round(likeness - raw);
            let score = two.as_ref().map_or(score, |w| w.score);
            SimilarHit {
                abs_path: root.join(&row.path).to_string_lossy().into_owned(),
                path: row.path,
                title: crate::text::title_shown(row.title),
                kind: crate::text::title_shown(row.kind),
                // Judged as shown: a likeness printed as 0.500 is a duplicate.
                score: round(score),
                likeness: Some(round(likeness)),
                verdict: match (exclude, &two) {
                    // A note of the brain: its duplicates are what `--all` merges.
                    (Some(_), Some(two)) => verdict::judge_two_way(two.score, two.best),
                    (Some(_), None) => verdict::judge_between_notes(
                        (round(score), t),
                        round(likeness),
                        verdict::shown_words(ev.words),
                    ),
                    (None, _) => {
                        let words = verdict::shown_words(ev.words);
                        let judged = verdict::judge((round(score), t), round(likeness), words);
                        let held = match too_short {
                            true => verdict::for_short_draft(judged, words),
                            false => judged,
                        };
                        demoted |= held != judged;
                        held
                    }
                },
                reason: match exclude {
                    Some(_) => verdict::reason_from_note(&ev),
                    None => verdict::reason(&ev),
                },
                line,
                evidence: explain.then_some(ev),
            }
        })
        .collect();
    results.sort_by(|a, b| {
        let dup = |h: &SimilarHit| h.verdict == Verdict::Duplicate;
        let key = |h: &SimilarHit| {
            if dup(h) {
                h.likeness.unwrap_or_default()
            } else {
                h.score
            }
        };
        dup(b)
            .cmp(&dup(a))
            .then(key(b).total_cmp(&key(a)))
            .then(a.path.cmp(&b.path))
    });
    let verdict = match results.first().map(|h| h.verdict) {
        Some(Verdict::Duplicate) => Verdict::Duplicate,
        _ if results.iter().any(|h| h.verdict != Verdict::New) => Verdict::Related,
        _ => Verdict::New,
    };
    // Counted before `--top` cuts: "related to 27 notes" is what the brain holds, not how
    // many were asked to be shown (it said 1, 3 or 10 as --top did).
    let summary = summary(verdict, &results);
    results.truncate(top);
    Ok(Similar {
        verdict,
        summary,
        results,
        too_short: demoted.then(|| words.len()),
    })
}
