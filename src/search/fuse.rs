//! Hybrid ranking over the candidates of both lists ([`super::candidates`]), each of which
//! carries its BM25 score and its similarity.
//!
//! Plain Reciprocal Rank Fusion (k = 60) is the baseline, always computed and shown by
//! `--explain`; on notes it loses to semantic search alone (a question's common words put
//! dozens of unrelated notes in the keyword list, and RRF counts any presence there). The
//! order comes instead from three rules, tuned on the tune half of the judged sets in
//! `eval/` (see `brain eval`, and `eval/README.md` for the measurements on the test half):
//!
//! 1. **A title that is the query leads.** The person typed a note's name.
//! 2. **Scores, weighted by the keyword list's evidence for this query:**
//!    `alpha * bm25 / bm25_max + (1 - alpha) * (cos - cos_min) / (cos_max - cos_min)`
//!    over the candidates of the lists' first 50 (`cos` is the note's semantic score, see
//!    [`super::semantic`]; a `--top` past 12 ranks the notes after those over the deeper
//!    lists, on their own scale, so that the first results never depend on `--top`),
//!    where `alpha = 0.5 * max(0, (coverage - 0.5) / 0.5)` and
//!    `coverage` is the share of the query's IDF mass that the keyword list's best note
//!    holds ([`super::evidence`]). Keywords count as much as meaning only when their best
//!    note holds every rare word of the query, and not at all when it holds under half of
//!    them: a paraphrase shares incidental words with many notes, and those must not move
//!    the semantic order. The earlier ramp without the dead zone (`alpha = 0.5 *
//!    coverage`) lost to semantic search on paraphrases written with other words than the
//!    note (tune half: 1 query better, 10 worse). When that best note also holds every
//!    literal of the query (rule 3) and coverage is past the dead zone, `alpha` is
//!    [`MAX_ALPHA`] ([`Weights::from_literal`]): a name only BM25 knows
//!    (`Kirchhoff-Helmholtz`, with a word the note misspells) was first in bm25 and second
//!    in hybrid (tune half: 3 queries better, none worse; the test half unchanged). Below
//!    the dead zone it does not apply: `iPhone` in a paraphrase is a literal too.
//!    The same full share goes to a keyword #1 that scores at least [`LEAD`] times the
//!    keyword #2 ([`Weights::from_lead`]): one note holds the query's rare words and no
//!    other comes close, the keyword list's own confidence (a score gap, as the
//!    literature on fusion measures it). A name written the way the corpus writes it but
//!    not as an identifier (Cranfield's `79.5degree sweepback ... mach number of 6.2`,
//!    asked as `79.5 degree sweepback ... Mach 6.2`) was first in bm25 and absent from
//!    hybrid's top 10 (semantic did not know the note). Tune half: 1 query better
//!    (5 -> 3), none worse, at 2.0; at 1.8, 2 better and 1 worse.
//!    Under that lead, the same gap says how far to trust the ramp
//!    ([`Weights::from_coverage_under_lead`]): `alpha` is multiplied by
//!    `(lead - 1) / (LEAD - 1)`, at least [`LEAD_FLOOR`], unless keyword #1 holds every
//!    word of the query or is the keyword list's only note. "find out which processes
//!    are accepting network connections on my mac" gave 76% coverage from common words
//!    (`out`, `network`, `mac`, `accepting`) spread over notes that score within 4% of
//!    each other, and the keyword share pushed the note semantic ranked 3rd out of the
//!    top 10. Against the hybrid before the rule,
//!    tune half: 20 queries better and 18 worse, most of both among Cranfield's
//!    questions, whose hits@1 went from 79 to 83; queries worse than semantic 24 -> 11;
//!    no tune set left where hybrid trails semantic (a `til-mix` paraphrase mended).
//!    Floor 0 mended the same and lost 3 notes-mix wins. Exempting full coverage keeps
//!    names first: without it, a name several notes hold (`docker system prune`) lost
//!    its #1.
//! 3. **Literal identifiers are strong evidence, not an override.** A note holding every
//!    identifier, path, flag or quoted phrase of the query literally gains
//!    [`LITERAL_BONUS`] (a third of the scale the scores live on): it climbs over notes of
//!    similar score, not over everything the semantic list knows.
//!
//!    A query that is nothing but names (identifiers, paths, flags, quoted phrases:
//!    `end_of_line`, `--timer`, `user.id`) puts the notes holding all of them first, in
//!    the order of their scores ([`Weights::with_literals_first`]), as the keyword list does:
//!    the bonus alone let a note that says "end of line" in prose, close in meaning,
//!    pass the three that set `end_of_line`. Over 450 names drawn from the three notes
//!    corpora (`scripts/eval-names.py`, 150 each, every one held by at most three notes),
//!    bm25 put a holder first for 416 and hybrid lost 12 of those (winning 5 elsewhere);
//!    with the tier it loses none (421 first). No `brain eval` cell moved.
//!
//! 4. **A query the model cannot read is the keyword list's.** When half or more of its
//!    tokens are ones the model cannot read ([`UNKNOWN`]): its unknown token (Chinese for
//!    MiniLM's English vocabulary, which knows few Han characters) or Hangul jamo (Korean,
//!    which its normaliser spells letter by letter). Its vector is then near any note:
//!    `alpha` is 1 ([`Weights::from_unknown`]).
//!
//! 5. **A note meaning has not read stands where the words put it.** A note not embedded
//!    yet takes, as its similarity, that of meaning's note at its keyword rank; scored 0,
//!    it sank under every embedded note until `brain index` embedded it.
//!
//! Every number that decides an order is reported by `--explain` (with the row where the
//! deeper lists' ranking begins, when there is one).

use serde::{Deserialize, Serialize};

use super::bm25::Exact;
use super::candidates::Candidate;
use super::evidence::Evidence;

/// The RRF constant of the baseline: how quickly a list's influence decays with rank.
pub const K: f64 = 60.0;

/// The keyword list's share of the fused score when it has full evidence.
pub const MAX_ALPHA: f64 = 0.5;

/// Below this coverage the keyword list does not weigh at all.
pub const DEAD_ZONE: f64 = 0.5;

/// How many times keyword #2's score keyword #1 must score for the keyword list to be
/// trusted as much as the semantic list.
pub const LEAD: f64 = 2.0;

/// At this share of unknown tokens in the query, its vector says too little of its meaning
/// for the semantic list to weigh at all ([`Weights::from_unknown`]).
pub const UNKNOWN: f32 = 0.5;

/// What holding every literal of the query adds to a note's score (scores are in 0..=1).
pub const LITERAL_BONUS: f64 = 0.3;

/// The least confidence a keyword list past the dead zone is given, however close its #2
/// scores to its #1.
pub const LEAD_FLOOR: f64 = 0.25;

/// How sure the keyword list is of its #1 when it scores `lead` times its #2: 1 at
/// [`LEAD`], falling linearly to [`LEAD_FLOOR`] as #2 comes level.
pub fn lead_confidence(lead: f64) -> f64 {
    ((lead - 1.0) / (LEAD - 1.0)).clamp(LEAD_FLOOR, 1.0)
}

/// What the fusion divides by: each candidate's keyword part is `alpha * bm25 / bm25_max`,
/// its meaning part `(1 - alpha) * (cos - cos_min) / (cos_max - cos_min)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// The best BM25 score among the candidates (not always keyword #1's: notes that hold
    /// a query's names literally are listed first).
    pub bm25_max: f64,
    /// The lowest similarity among the candidates (meaning's part is 0 there); `None`
    /// when no candidate has a vector yet.
    pub cos_min: Option<f64>,
    /// The highest (meaning's part is whole there); `None` as `cos_min`.
    pub cos_max: Option<f64>,
}

impl Scale {
    /// The scale of `candidates`.
    pub(crate) fn of(candidates: &[Candidate]) -> Scale {
        let cos = || candidates.iter().filter_map(|c| c.cos.map(f64::from));
        Scale {
            bm25_max: candidates.iter().map(|c| c.bm25).fold(0.0, f64::max),
            cos_min: cos().reduce(f64::min),
            cos_max: cos().reduce(f64::max),
        }
    }
}

/// How much each list counts for one query, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// The keyword list's share (0..=[`MAX_ALPHA`], or 1 when the model cannot read the
    /// query); the semantic list has `1 - alpha`.
    pub alpha: f64,
    /// One line saying which evidence set the weights.
    pub reason: String,
    /// The query is only names ([`super::query::Query::only_literals`]): the notes holding
    /// every one of them literally come first (after a title that is the query), in the
    /// order of their scores.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literals_first: bool,
}

impl Weights {
    /// The weights `evidence` calls for, with `literal_top` whether keyword #1 holds every
    /// literal of the query: past the dead zone, a literal or a clear lead gives keywords
    /// their full share; otherwise coverage sets it.
    pub fn choose(evidence: &Evidence, literal_top: bool) -> Weights {
        if evidence.coverage <= DEAD_ZONE {
            Weights::from_coverage(evidence.coverage)
        } else if literal_top {
            Weights::from_literal(evidence.coverage)
        } else if evidence.bm25_lead >= LEAD {
            Weights::from_lead(evidence.coverage, evidence.bm25_lead)
        } else {
            Weights::from_coverage_under_lead(
                evidence.coverage,
                evidence.bm25_lead,
                evidence.bm25_hits,
            )
        }
    }

    /// Weights for a query whose keyword #1 holds `coverage` of its IDF mass (past the
    /// dead zone) and scores `lead` (under [`LEAD`]) times keyword #2: the coverage ramp,
    /// scaled by the keyword list's confidence ([`lead_confidence`]) unless keyword #1
    /// holds every word of the query, which is evidence enough, or is the list's only
    /// note (`hits`), which no other note's score calls into doubt.
    pub fn from_coverage_under_lead(coverage: f64, lead: f64, hits: usize) -> Weights {
        let ramp = Weights::from_coverage(coverage);
        if coverage >= 1.0 || hits < 2 {
            return ramp;
        }
        let confidence = lead_confidence(lead);
        Weights::new(
            ramp.alpha * confidence,
            format!(
                "{}, scoring {lead:.2}x keyword #2 (confidence {confidence:.2})",
                ramp.reason
            ),
        )
    }

    /// `alpha` for `reason`, with no tier of literals (see [`Weights::with_literals_first`]).
    fn new(alpha: f64, reason: String) -> Weights {
        Weights {
            alpha,
            reason,
            literals_first: false,
        }
    }

    /// These weights, with the notes holding every literal first when `only_literals`
    /// (the query is nothing but names).
    pub fn with_literals_first(mut self, only_literals: bool) -> Weights {
        if only_literals {
            self.literals_first = true;
            self.reason
                .push_str("; the query is only names: notes holding them literally first");
        }
        self
    }

    /// Weights for a query whose tokens the model mostly cannot read (`share` of them, at
    /// least [`UNKNOWN`]: Chinese or Korean for MiniLM's English vocabulary): its vector
    /// says little of its meaning and has any notes for neighbours, so the keyword list
    /// alone orders the results.
    pub fn from_unknown(share: f32) -> Weights {
        Weights::new(
            1.0,
            format!(
                "the model does not know {:.0}% of the query's tokens: keywords decide",
                share * 100.0
            ),
        )
    }

    /// Weights for a query whose best keyword hit holds `coverage` of its IDF mass.
    pub fn from_coverage(coverage: f64) -> Weights {
        let coverage = coverage.clamp(0.0, 1.0);
        let alpha = MAX_ALPHA * ((coverage - DEAD_ZONE) / (1.0 - DEAD_ZONE)).max(0.0);
        let reason = if alpha > 0.0 {
            format!(
                "keyword #1 holds {:.0}% of the query's IDF mass",
                coverage * 100.0
            )
        } else {
            format!(
                "keyword #1 holds {:.0}% of the query's IDF mass (under {:.0}%: meaning decides)",
                coverage * 100.0,
                DEAD_ZONE * 100.0
            )
        };
        Weights::new(alpha, reason)
    }

    /// Weights for a query whose keyword #1 holds every literal of it (identifier, path,
    /// flag or quoted phrase): the person named something that note contains verbatim,
    /// and names are what keywords know, so the keyword list gets its full share whatever
    /// the `coverage` of the other words.
    pub fn from_literal(coverage: f64) -> Weights {
        Weights::new(
            MAX_ALPHA,
            format!(
                "keyword #1 holds every identifier of the query literally (and {:.0}% of its IDF mass)",
                coverage.clamp(0.0, 1.0) * 100.0
            ),
        )
    }

    /// Weights for a query whose keyword #1 scores `lead` (>= [`LEAD`]) times keyword #2:
    /// the keyword list is sure of its answer, so it gets its full share whatever the
    /// `coverage` past the dead zone.
    pub fn from_lead(coverage: f64, lead: f64) -> Weights {
        Weights::new(
            MAX_ALPHA,
            format!(
                "keyword #1 scores {lead:.1}x keyword #2 (and holds {:.0}% of the query's IDF mass)",
                coverage.clamp(0.0, 1.0) * 100.0
            ),
        )
    }
}

/// One fused result with the parts of its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Fused {
    /// `notes.id`.
    pub note_id: i64,
    /// The fused score: `bm25_part + sem_part + exact_part`.
    pub score: f64,
    /// The baseline's score: `1/(K + bm25_rank) + 1/(K + sem_rank)`.
    pub rrf: f64,
    /// 1-based rank in the keyword list.
    pub bm25_rank: Option<u32>,
    /// 1-based rank in the semantic list.
    pub sem_rank: Option<u32>,
    /// `alpha * bm25 / bm25_max`.
    pub bm25_part: f64,
    /// `(1 - alpha) * normalised similarity`.
    pub sem_part: f64,
    /// [`LITERAL_BONUS`] when the note holds every literal of the query, else 0.
    pub exact_part: f64,
    /// Exact evidence from the keyword side.
    pub exact: Exact,
    /// The best semantic passage, when the note made the semantic list.
    pub chunk_id: Option<i64>,
}

/// Fuses `candidates` with `weights` and returns them all, best first.
pub(crate) fn fuse(candidates: &[Candidate], weights: &Weights) -> Vec<Fused> {
    let alpha = weights.alpha.clamp(0.0, 1.0);
    let Scale {
        bm25_max,
        cos_min,
        cos_max,
    } = Scale::of(candidates);
    let rrf_of = |rank: Option<u32>| rank.map_or(0.0, |r| 1.0 / (K + f64::from(r)));
    let normalise = |s: f64| match (cos_min, cos_max) {
        (Some(lo), Some(hi)) if hi > lo => (s - lo) / (hi - lo),
        _ => 1.0,
    };
    // The similarities meaning gave, best first: what a note it has not read yet is taken
    // to score (below).
    let mut by_meaning: Vec<f64> = candidates
        .iter()
        .filter_map(|c| c.cos.map(|s| normalise(f64::from(s))))
        .collect();
    by_meaning.sort_by(|a, b| b.total_cmp(a));
    let mut fused: Vec<Fused> = candidates
        .iter()
        .map(|c| {
            let normalised = match (c.cos, c.bm25_rank) {
                (Some(s), _) => normalise(f64::from(s)),
                // Not embedded yet (just saved, or waiting for `brain index`): meaning has
                // not read it, so it is taken to stand where the words put it, the
                // similarity of meaning's note at its keyword rank. Scored 0 instead, a
                // new note the words find first sank under every note meaning knew (at
                // a low keyword share, to the bottom of the list): hybrid was worse
                // than keywords alone until the note was embedded.
                (None, Some(rank)) => by_meaning
                    .get((rank as usize).saturating_sub(1))
                    .or(by_meaning.last())
                    .copied()
                    .unwrap_or(1.0),
                (None, None) => 0.0,
            };
            let bm25_part = if bm25_max > 0.0 {
                alpha * c.bm25 / bm25_max
            } else {
                0.0
            };
            let sem_part = (1.0 - alpha) * normalised;
            let exact_part = match c.exact {
                Exact::Identifier => LITERAL_BONUS,
                _ => 0.0,
            };
            Fused {
                note_id: c.note_id,
                score: bm25_part + sem_part + exact_part,
                rrf: rrf_of(c.bm25_rank) + rrf_of(c.sem_rank),
                bm25_rank: c.bm25_rank,
                sem_rank: c.sem_rank,
                bm25_part,
                sem_part,
                exact_part,
                exact: c.exact,
                chunk_id: c.chunk.filter(|_| c.sem_rank.is_some()),
            }
        })
        .collect();
    let literal = |f: &Fused| weights.literals_first && f.exact == Exact::Identifier;
    fused.sort_by(|a, b| {
        (b.exact == Exact::Title)
            .cmp(&(a.exact == Exact::Title))
            .then(literal(b).cmp(&literal(a)))
            .then(b.score.total_cmp(&a.score))
            .then(b.rrf.total_cmp(&a.rrf))
            // Tied on both (each list's #1, the other list missing it): the note that holds
            // the query's words, as far as the weights let keywords count at all.
            .then(b.bm25_part.total_cmp(&a.bm25_part))
            .then(a.note_id.cmp(&b.note_id))
    });
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_without_vectors_says_so_and_crosses_the_wire() {
        let mut none = c(1, 2.0, 0.5, Exact::None);
        none.cos = None;
        let scale = Scale::of(&[none]);
        assert_eq!((scale.cos_min, scale.cos_max), (None, None));
        let back: Scale = serde_json::from_str(&serde_json::to_string(&scale).unwrap()).unwrap();
        assert_eq!(back, scale);
        let two = Scale::of(&[c(1, 2.0, 0.25, Exact::None), c(2, 3.0, 0.75, Exact::None)]);
        assert_eq!(
            (two.bm25_max, two.cos_min, two.cos_max),
            (3.0, Some(0.25), Some(0.75))
        );
    }

    fn c(id: i64, bm25: f64, cos: f32, exact: Exact) -> Candidate {
        Candidate {
            note_id: id,
            bm25,
            bm25_rank: (bm25 > 0.0).then_some(id as u32),
            cos: Some(cos),
            sem_rank: Some(id as u32),
            chunk: Some(id * 10),
            exact,
        }
    }

    fn order(f: &[Fused]) -> Vec<i64> {
        f.iter().map(|f| f.note_id).collect()
    }

    #[test]
    fn a_literal_or_a_lead_past_the_dead_zone_gives_keywords_their_full_share() {
        let ev = |coverage, bm25_lead| Evidence {
            bm25_hits: 10,
            coverage,
            bm25_lead,
            ..Evidence::default()
        };
        let alpha = |e: &Evidence, literal| Weights::choose(e, literal).alpha;
        assert_eq!(alpha(&ev(0.55, 2.7), false), MAX_ALPHA);
        assert!(Weights::choose(&ev(0.55, 2.7), false)
            .reason
            .contains("2.7x"));
        assert_eq!(alpha(&ev(0.55, 1.0), true), MAX_ALPHA);
        // Under the lead, the ramp is scaled by the keyword list's confidence.
        assert!((alpha(&ev(0.75, 1.9), false) - 0.25 * 0.9).abs() < 1e-12);
        // In the dead zone neither counts: a paraphrase's incidental words decide nothing.
        assert_eq!(alpha(&ev(0.45, 9.0), true), 0.0);
    }

    #[test]
    fn a_keyword_one_barely_ahead_of_its_two_counts_less_unless_it_holds_every_word() {
        // 76% of a paraphrase's IDF mass, keyword #1 at 1.04x #2: common words that many
        // notes share, not a find; the ramp's 0.26 falls to the floor's share of it.
        let w = Weights::from_coverage_under_lead(0.76, 1.04, 10);
        assert!((w.alpha - 0.26 * LEAD_FLOOR).abs() < 1e-12, "{}", w.alpha);
        assert!(
            w.reason.contains("1.04x") && w.reason.contains("0.25"),
            "{}",
            w.reason
        );
        assert!((lead_confidence(1.5) - 0.5).abs() < 1e-12);
        assert_eq!(lead_confidence(LEAD), 1.0);
        assert_eq!(lead_confidence(0.5), LEAD_FLOOR);
        // Every word in keyword #1 (a name several notes hold): the ramp alone.
        let full = Weights::from_coverage_under_lead(1.0, 1.01, 10);
        assert_eq!(full.alpha, MAX_ALPHA);
        assert_eq!(full, Weights::from_coverage(1.0));
        // The keyword list's only note: no #2 to doubt it by (its lead reads 1).
        let alone = Weights::from_coverage_under_lead(0.76, 1.0, 1);
        assert_eq!(alone, Weights::from_coverage(0.76));
        let e = Evidence {
            bm25_hits: 10,
            coverage: 0.76,
            bm25_lead: 1.04,
            ..Evidence::default()
        };
        assert_eq!(Weights::choose(&e, false), w);
    }

    #[test]
    fn the_dead_zone_and_the_ramp() {
        assert_eq!(Weights::from_coverage(0.3).alpha, 0.0);
        assert_eq!(Weights::from_coverage(0.5).alpha, 0.0);
        assert!((Weights::from_coverage(0.75).alpha - 0.25).abs() < 1e-12);
        assert_eq!(Weights::from_coverage(1.0).alpha, 0.5);
        assert_eq!(Weights::from_coverage(7.0).alpha, 0.5);
        assert!(Weights::from_coverage(0.2)
            .reason
            .contains("meaning decides"));
    }

    #[test]
    fn a_literal_at_keyword_one_gets_the_full_share_and_says_why() {
        let w = Weights::from_literal(0.73);
        assert_eq!(w.alpha, MAX_ALPHA);
        assert!(
            w.reason.contains("identifier") && w.reason.contains("73%"),
            "{}",
            w.reason
        );
        assert!(Weights::from_literal(0.73).alpha > Weights::from_coverage(0.73).alpha);
    }

    #[test]
    fn a_tie_between_the_two_lists_leaders_goes_to_the_keyword_one() {
        // Note 7 is meaning's #1 and no keyword hit; note 9 keywords' #1 and meaning's
        // least like the query, not in the semantic list: each scores alpha = 0.5 and one
        // rank-1 RRF term. The lower id must not decide: the note holding the words does.
        let sem_only = Candidate {
            note_id: 7,
            bm25: 0.0,
            bm25_rank: None,
            cos: Some(0.3),
            sem_rank: Some(1),
            chunk: Some(70),
            exact: Exact::None,
        };
        let kw_only = Candidate {
            note_id: 9,
            bm25: 5.0,
            bm25_rank: Some(1),
            cos: Some(0.1),
            sem_rank: None,
            chunk: Some(90),
            exact: Exact::None,
        };
        let f = fuse(&[sem_only, kw_only], &Weights::from_coverage(1.0));
        assert_eq!(f[0].score, f[1].score);
        assert_eq!(order(&f), vec![9, 7]);
    }

    #[test]
    fn full_keyword_evidence_counts_as_much_as_meaning() {
        // Note 2 is good in both lists; note 1 tops keywords only, note 3 meaning only:
        // with full evidence the keyword leader outweighs the meaning-only note.
        let f = fuse(
            &[
                c(1, 10.0, 0.2, Exact::None),
                c(2, 9.0, 0.8, Exact::None),
                c(3, 0.0, 0.9, Exact::None),
                c(4, 0.0, 0.1, Exact::None),
            ],
            &Weights::from_coverage(1.0),
        );
        assert_eq!(order(&f), vec![2, 1, 3, 4]);
        assert!((f[0].bm25_part - 0.45).abs() < 1e-9);
        assert!((f[0].sem_part - 0.5 * 0.875).abs() < 1e-6);
        assert_eq!(f[0].chunk_id, Some(20));
    }

    #[test]
    fn weak_keyword_evidence_leaves_the_semantic_order() {
        let f = fuse(
            &[
                c(1, 10.0, 0.6, Exact::None),
                c(2, 9.9, 0.5, Exact::None),
                c(3, 0.0, 0.9, Exact::None),
            ],
            &Weights::from_coverage(0.45),
        );
        assert_eq!(order(&f), vec![3, 1, 2]);
        assert_eq!(f[1].bm25_part, 0.0);
    }

    #[test]
    fn a_literal_lifts_over_close_scores_but_not_over_everything() {
        let w = Weights::from_coverage(0.0);
        // Close in meaning: the literal decides.
        let f = fuse(
            &[
                c(1, 0.0, 0.90, Exact::None),
                c(2, 1.0, 0.85, Exact::Identifier),
                c(3, 0.0, 0.10, Exact::None),
            ],
            &w,
        );
        assert_eq!(order(&f), vec![2, 1, 3]);
        assert_eq!(f[0].exact_part, LITERAL_BONUS);
        // Far in meaning: the best passage stays first.
        let f = fuse(
            &[
                c(1, 0.0, 0.90, Exact::None),
                c(2, 1.0, 0.20, Exact::Identifier),
                c(3, 0.0, 0.10, Exact::None),
            ],
            &w,
        );
        assert_eq!(order(&f), vec![1, 2, 3]);
    }

    #[test]
    fn a_query_of_only_names_puts_the_notes_holding_them_first() {
        // `end_of_line`: a note saying "end of line" in prose, close in meaning and high in
        // BM25 (the name's words), passed the one that sets `end_of_line`, far in meaning.
        let notes = [
            c(1, 9.0, 0.90, Exact::None),
            c(2, 5.0, 0.20, Exact::Identifier),
            c(3, 2.0, 0.10, Exact::Identifier),
            c(4, 0.0, 0.10, Exact::Title),
        ];
        let w = Weights::from_literal(1.0);
        assert_eq!(order(&fuse(&notes, &w)), vec![4, 1, 2, 3]);
        let w = w.with_literals_first(true);
        assert!(w.literals_first && w.reason.contains("only names"), "{w:?}");
        // A title that is the query still leads; among the holders, their scores decide.
        assert_eq!(order(&fuse(&notes, &w)), vec![4, 2, 3, 1]);
        assert_eq!(
            Weights::from_coverage(0.7).with_literals_first(false),
            Weights::from_coverage(0.7)
        );
    }

    #[test]
    fn exact_title_leads_even_against_agreement() {
        let f = fuse(
            &[c(1, 10.0, 0.9, Exact::None), c(2, 3.0, 0.1, Exact::Title)],
            &Weights::from_coverage(1.0),
        );
        assert_eq!(f[0].note_id, 2);
    }

    #[test]
    fn rrf_is_the_baseline_of_the_ranks() {
        let f = fuse(&[c(2, 5.0, 0.5, Exact::None)], &Weights::from_coverage(1.0));
        assert!((f[0].rrf - 2.0 / 62.0).abs() < 1e-12);
    }

    #[test]
    fn empty_single_and_unembedded_candidates() {
        assert!(fuse(&[], &Weights::from_coverage(0.5)).is_empty());
        let f = fuse(&[c(1, 0.0, 0.3, Exact::None)], &Weights::from_coverage(0.0));
        assert_eq!(f[0].sem_part, 1.0);
        let mut pending = c(2, 4.0, 0.0, Exact::None);
        pending.cos = None;
        pending.sem_rank = None;
        let f = fuse(
            &[c(1, 2.0, 0.3, Exact::None), pending],
            &Weights::from_coverage(1.0),
        );
        let p = f
            .iter()
            .find(|f| f.note_id == 2)
            .map(|f| (f.sem_part, f.chunk_id));
        // Keyword #2 of two, below meaning's only note: it takes that note's similarity.
        assert_eq!(p, Some((0.5, None)));
    }

    /// A note not embedded yet stands where the words put it: keyword #1 is taken to be as
    /// close in meaning as meaning's #1, so a low keyword share does not bury it.
    #[test]
    fn a_note_not_embedded_yet_is_ranked_by_its_words() {
        let mut pending = c(9, 4.0, 0.0, Exact::None);
        (pending.cos, pending.sem_rank, pending.bm25_rank) = (None, None, Some(1));
        let mut known: Vec<Candidate> = (1..=5)
            .map(|id| {
                let mut k = c(id, 1.0, 0.5 - 0.05 * id as f32, Exact::None);
                k.bm25_rank = Some(id as u32 + 1);
                k
            })
            .collect();
        known.push(pending);
        let f = fuse(&known, &Weights::from_coverage(0.6));
        assert_eq!(f[0].note_id, 9, "{f:?}");
        // alpha 0.1: meaning's #1 similarity (normalised 1) at 0.9.
        assert!((f[0].sem_part - 0.9).abs() < 1e-9, "{:?}", f[0]);
        // Below every keyword hit meaning knows, it takes the last similarity, not 0.
        known.last_mut().unwrap().bm25_rank = Some(40);
        known.last_mut().unwrap().bm25 = 0.5;
        let f = fuse(&known, &Weights::from_coverage(0.6));
        let p = f.iter().find(|f| f.note_id == 9).unwrap();
        assert_eq!(
            p.sem_part, 0.0,
            "the last of meaning's is its minimum: 0 here"
        );
    }
}
