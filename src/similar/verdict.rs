//! From evidence to a verdict: two numbers per pair, each with its threshold, per mode.
//!
//! Two questions, because one number answered them badly: is the note about what the draft
//! is about (`score`: related at [`Thresholds::related`]), and is it the same note (its
//! `likeness`: duplicate at [`Thresholds::duplicate`]).
//!
//! With a model, `score = 0.6 * draft_covered' + 0.2 * note_covered' + 0.2 * rare_shared`,
//! the primed alignments rescaled from [`FLOOR`] (unrelated passages rarely align below it)
//! to 1; `likeness = 0.4 * draft_covered' + words`, plus [`STANDOUT`] times its lead
//! over the fourth candidate's likeness, at most [`MAX_LEAD`] (the shared words hold the
//! rare ones too). The passages say two notes are about the same thing; the shared words
//! (`words`) say they make the same points; and the same lesson written twice stands out
//! from the notes around it, where a related draft sits among several of its topic's notes
//! at about the same likeness. Title
//! likeness is shown but not weighed: on the development drafts it added nothing the rest
//! did not already say. Without a model, `score = 0.5 * rare_shared + 0.5 * title` and
//! `likeness = words + 0.25 * title`, with the same lead. Calibrated on the tune
//! halves of `eval/drafts/` and `eval/drafts-jaebradley/` (figures in `eval/README.md`).

use serde::{Deserialize, Serialize};

use super::evidence::PairEvidence;
use super::Verdict;

/// Where the verdicts change, for one mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Likeness at and above which a pair is a duplicate.
    pub duplicate: f64,
    /// Score at and above which a pair is related.
    pub related: f64,
}

/// With a model.
pub const SEMANTIC: Thresholds = Thresholds {
    duplicate: 0.5,
    related: 0.29,
};

/// Without one (words and titles).
pub const KEYWORDS: Thresholds = Thresholds {
    duplicate: 0.32,
    related: 0.15,
};

/// Two passages at least this close make their notes a candidate pair (the cosine of the
/// quantized vectors).
pub const PAIR_MIN: f32 = 0.8;
/// `brain similar --all` joins a pair of notes at this score (both ways), above the duplicate verdict's threshold: a list of
/// the whole brain is read as "merge these", so it keeps to the pairs that are plainly the
/// same note (in the example brain a lesson and the docs it cites align at 0.77 / 0.74 and
/// share 30% of their rare words: 0.62, a duplicate verdict for a draft, not a cluster).
pub const CLUSTER_AT: f64 = 0.7;

/// Without a model, the word overlap a duplicate needs, whatever its likeness: in a brain
/// kept in topic folders `go/json.md` and `javascript/json.md` are both "JSON", and the
/// title alone (words overlap 0.04, plus the lead) once made a draft on Go's JSON a
/// duplicate of the other. Every duplicate of the development drafts' tune halves
/// overlaps its original by 0.23 or more; at 0.2 no verdict of either half changes.
pub const DUPLICATE_NEEDS_WORDS: f64 = 0.2;

/// A word overlap as reason lines show it (two decimals), which is what the thresholds
/// are held to: `words overlap 0.50` under a rule of `>= 0.5` is a duplicate.
pub(crate) fn shown_words(words: f64) -> f64 {
    (words * 100.0).round() / 100.0
}

/// Without a model, the word overlap at which two notes of the brain are duplicates
/// ([`judge_between_notes`]) and `--all` groups same-titled notes: half their words.
/// Notes of one author share templates and phrasing, so the draft rule called 36 of 60
/// random notes-mix notes a duplicate of a neighbour (`positional-arguments.md` of
/// `keyword-arguments.md`, 0.46); a copy renamed overlaps near 1.
pub const NOTES_WORDS: f64 = 0.5;

/// A draft of fewer distinct words than this (stems of 3 letters or more, stopwords
/// aside) is a duplicate only of a note it shares half its words with ([`NOTES_WORDS`], as
/// two notes of the brain without a model): its own side of the word overlap is whole as
/// soon as a note holds its few words. `brain similar --text docker` called a Jekyll note on
/// containers its duplicate (words overlap 0.41), and `Sort lines in vim with :sort` a note
/// on deleting comments in vim (0.45); a copy of a two-line note overlaps it at 1. The
/// development drafts have 17 words or more.
pub const MIN_DRAFT_WORDS: usize = 10;

/// Cosine treated as "nothing in common" when rescaling alignments.
pub const FLOOR: f64 = 0.2;

/// Weight of a candidate's lead over the [`REFERENCE`]th candidate in its likeness.
pub const STANDOUT: f64 = 0.5;

/// The most a lead adds: it tips a close call, never makes one. In a small brain, where
/// little stands near a draft, any note leads by far (and the first distant note to enter a
/// three-candidate list would otherwise swing a verdict); on the development drafts no
/// verdict needed more.
pub const MAX_LEAD: f64 = 0.1;

/// Which candidate (1-based, by likeness) the lead is measured from: the first three may
/// all be copies of the draft, the fourth rarely is. With fewer candidates there is no
/// crowd to stand out from, and no lead is added.
pub const REFERENCE: usize = 4;

fn rescale(cos: f64) -> f64 {
    ((cos - FLOOR) / (1.0 - FLOOR)).clamp(0.0, 1.0)
}

/// How much a pair shares, 0..1, and the thresholds that apply to it.
pub(crate) fn score(e: &PairEvidence) -> (f64, Thresholds) {
    match (e.draft_covered, e.note_covered) {
        (Some(d), Some(n)) => (
            0.6 * rescale(d) + 0.2 * rescale(n) + 0.2 * e.rare_shared,
            SEMANTIC,
        ),
        _ => (0.5 * e.rare_shared + 0.5 * e.title, KEYWORDS),
    }
}

/// How much a pair is the same note, before any lead: 0..1.4 with a model, 0..1.25
/// without (a lead adds up to [`MAX_LEAD`]).
pub(crate) fn likeness(e: &PairEvidence) -> f64 {
    match e.draft_covered {
        Some(d) => 0.4 * rescale(d) + e.words,
        None => e.words + 0.25 * e.title,
    }
}

/// The likeness of each candidate (`raw`, from [`likeness`]) with its lead over the
/// [`REFERENCE`]th added.
pub(crate) fn with_lead(raw: &[f64]) -> Vec<f64> {
    let mut sorted = raw.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    match sorted.get(REFERENCE - 1) {
        Some(&reference) => raw
            .iter()
            .map(|&l| l + (STANDOUT * (l - reference)).clamp(0.0, MAX_LEAD))
            .collect(),
        _ => raw.to_vec(),
    }
}

/// The verdict for a pair of this score and likeness. A draft may be a duplicate below
/// the related score: a lesson written again in the same words whose passages the model
/// aligns poorly (a `drafts-jaebradley` duplicate aligns at 0.40 but shares a third of
/// its words). Two notes of the brain are judged by [`judge_between_notes`].
pub(crate) fn judge((score, t): (f64, Thresholds), likeness: f64, words: f64) -> Verdict {
    if likeness >= t.duplicate && (t == SEMANTIC || words >= DUPLICATE_NEEDS_WORDS) {
        Verdict::Duplicate
    } else if score >= t.related {
        Verdict::Related
    } else {
        Verdict::New
    }
}

/// The verdict for a note of the brain against another judged one way: without a model,
/// a duplicate only when they share [`NOTES_WORDS`] of their `words`; with one (a note whose
/// passages are not stored yet, so that it cannot be scored both ways: see
/// [`judge_two_way`]), only when its score reaches the one at which `brain similar --all`
/// merges a pair ([`CLUSTER_AT`]).
/// The draft thresholds were calibrated on drafts written apart from the notes;
/// two notes of one brain share their author's templates and phrasing, which the word
/// overlap reads as sameness (on 60 random notes of the notes-mix corpus, 24 were called
/// duplicates of a neighbour under the draft rule: `set.md` of `arrays.md`, positional of
/// keyword arguments), while the score, which reads what the passages are about, keeps
/// to pairs that are plainly the same note.
///
pub(crate) fn judge_between_notes(
    (score, t): (f64, Thresholds),
    likeness: f64,
    words: f64,
) -> Verdict {
    match judge((score, t), likeness, words) {
        // With a model only: `--all`'s 0.7 is a score of passages; without one the score is
        // rare words and titles, and a copy renamed (a body the same, a title not) is still
        // a duplicate by its words.
        Verdict::Duplicate if t == SEMANTIC && score < CLUSTER_AT => match score >= t.related {
            true => Verdict::Related,
            false => Verdict::New,
        },
        Verdict::Duplicate if t == KEYWORDS && words < NOTES_WORDS => match score >= t.related {
            true => Verdict::Related,
            false => Verdict::New,
        },
        v => v,
    }
}

/// `verdict` for a draft of under [`MIN_DRAFT_WORDS`] words whose overlap with the note is
/// `words`: a duplicate under [`NOTES_WORDS`] is related (never new: the note holds the
/// draft's words, and `brain new` lists such notes to link).
pub(crate) fn for_short_draft(verdict: Verdict, words: f64) -> Verdict {
    match verdict {
        Verdict::Duplicate if words < NOTES_WORDS => Verdict::Related,
        v => v,
    }
}

/// The verdict for two notes of the brain scored both ways (their mean `score`, and the
/// cosine of their `best`-aligned passages): a duplicate
/// exactly when `brain similar --all` joins them, whichever of the two is asked about (one
/// way, `docker-cli/prune.md` called `docker/clean.md` a duplicate at 0.714 and `clean.md`
/// called `prune.md` related at 0.648; on 120 random notes-mix notes every duplicate so
/// found was one-way, and none was a pair `--all` lists).
pub(crate) fn judge_two_way(score: f64, best: f64) -> Verdict {
    if score >= CLUSTER_AT && best >= f64::from(PAIR_MIN) {
        Verdict::Duplicate
    } else if score >= SEMANTIC.related {
        Verdict::Related
    } else {
        Verdict::New
    }
}

/// What was judged, for the rule a footer states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// A draft (text, or a file outside the brain).
    Draft,
    /// A note of the brain, each candidate scored both ways ([`judge_two_way`]; with a
    /// model, once the note's passages are stored).
    NoteBothWays,
    /// A note of the brain judged from its side only: without a model, or before its
    /// passages are stored ([`judge_between_notes`]).
    NoteOneWay,
}

/// The rule that judged, as the footer of `brain similar` says it: with a model or
/// without (`semantic`), for what was `judged`.
pub fn rule(semantic: bool, judged: Judged) -> String {
    let t = if semantic { SEMANTIC } else { KEYWORDS };
    let duplicate = match (semantic, judged) {
        (true, Judged::Draft) => format!(
            "likeness >= {} (and words overlap >= {NOTES_WORDS} for a draft of under {MIN_DRAFT_WORDS} words)",
            t.duplicate
        ),
        (true, Judged::NoteBothWays) => format!(
            "score both ways >= {CLUSTER_AT} with passages aligned >= {PAIR_MIN} (as --all joins)"
        ),
        (true, Judged::NoteOneWay) => {
            format!("likeness >= {} and score >= {CLUSTER_AT}", t.duplicate)
        }
        (false, Judged::Draft) => format!(
            "likeness >= {} and words overlap >= {DUPLICATE_NEEDS_WORDS} (>= {NOTES_WORDS} for a draft of under {MIN_DRAFT_WORDS} words)",
            t.duplicate
        ),
        (false, _) => format!(
            "likeness >= {} and words overlap >= {NOTES_WORDS}",
            t.duplicate
        ),
    };
    format!(
        "duplicate at {duplicate}, related at score >= {}",
        t.related
    )
}

/// One line a person can check, about a draft and a note.
pub(crate) fn reason(e: &PairEvidence) -> String {
    reason_as(e, ("draft", "note"))
}

/// [`reason`] for a note of the brain compared with another (`brain similar NOTE`): "note"
/// (the one asked about) and "other" where a draft and a note would be named.
pub(crate) fn reason_from_note(e: &PairEvidence) -> String {
    reason_as(e, ("note", "other"))
}

/// [`reason`] for two notes of the brain (`--all`): "first" and "second" where a draft
/// and a note would be named.
pub(crate) fn reason_between_notes(e: &PairEvidence) -> String {
    reason_as(e, ("first", "second"))
}

fn reason_as(e: &PairEvidence, (from, to): (&str, &str)) -> String {
    let mut parts = Vec::new();
    if let (Some(d), Some(n)) = (e.draft_covered, e.note_covered) {
        // A cosine a hair under 0 read "-0.00": no alignment is less than none.
        let (d, n) = (d.max(0.0), n.max(0.0));
        parts.push(format!(
            "passages align {d:.2} ({from} in {to}) and {n:.2} ({to} in {from})"
        ));
    }
    if e.shared.is_empty() {
        parts.push("no rare word in common".into());
    } else {
        let words: Vec<&str> = e.shared.iter().take(5).map(String::as_str).collect();
        parts.push(format!(
            "shares {} ({:.0}% of the {from}'s rare words)",
            words.join(", "),
            e.rare_shared * 100.0
        ));
    }
    // `--all` leaves the overlap out (0): it does not say "nothing in common" there.
    if e.words > 0.0 {
        parts.push(format!("words overlap {:.2}", e.words));
    }
    if e.title >= 0.5 {
        parts.push(format!("titles {:.0}% alike", e.title * 100.0));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(d: f64, n: f64, rare: f64, title: f64) -> PairEvidence {
        PairEvidence {
            best: Some(d),
            draft_covered: Some(d),
            note_covered: Some(n),
            rare_shared: rare,
            shared: vec!["lease".into()],
            title,
            words: 0.0,
            both_ways: None,
            lead: 0.0,
        }
    }

    #[test]
    fn a_short_draft_duplicates_only_a_note_it_shares_half_its_words_with() {
        assert_eq!(for_short_draft(Verdict::Duplicate, 0.41), Verdict::Related);
        assert_eq!(for_short_draft(Verdict::Duplicate, 0.5), Verdict::Duplicate);
        assert_eq!(for_short_draft(Verdict::Duplicate, 1.0), Verdict::Duplicate);
        assert_eq!(for_short_draft(Verdict::Related, 0.1), Verdict::Related);
        assert_eq!(for_short_draft(Verdict::New, 0.1), Verdict::New);
        assert!(rule(true, Judged::Draft).contains("a draft of under 10 words"));
        assert!(!rule(true, Judged::NoteBothWays).contains("words"));
    }

    #[test]
    fn the_thresholds_order_the_verdicts() {
        let (strong, weak) = (ev(0.95, 0.9, 1.0, 1.0), ev(0.1, 0.1, 0.0, 0.0));
        let same = PairEvidence {
            words: 0.6,
            ..strong.clone()
        };
        assert_eq!(
            judge(score(&same), likeness(&same), same.words),
            Verdict::Duplicate
        );
        // Aligned passages without shared words: the same topic, not the same note.
        assert_eq!(
            judge(score(&strong), likeness(&strong), strong.words),
            Verdict::Related
        );
        assert_eq!(
            judge(score(&weak), likeness(&weak), weak.words),
            Verdict::New
        );
        assert_eq!(judge((0.3, SEMANTIC), 0.0, 0.0), Verdict::Related);
        assert_eq!(
            judge((0.0, SEMANTIC), SEMANTIC.duplicate, 0.0),
            Verdict::Duplicate
        );
        // Two notes of the brain: a duplicate is a pair `--all` would merge.
        let merged = CLUSTER_AT;
        assert_eq!(
            judge_between_notes((merged - 0.01, SEMANTIC), 0.9, 1.0),
            Verdict::Related
        );
        assert_eq!(
            judge_between_notes((merged, SEMANTIC), 0.9, 1.0),
            Verdict::Duplicate
        );
        // Alike in words only (one site's boilerplate): not even related.
        assert_eq!(judge_between_notes((0.1, SEMANTIC), 0.9, 1.0), Verdict::New);
        // Scored both ways: the mean decides, and a pair `--all` would not look at (no
        // two passages at PAIR_MIN) is not a duplicate, however high its score.
        let close = f64::from(PAIR_MIN);
        assert_eq!(judge_two_way(merged, close), Verdict::Duplicate);
        assert_eq!(judge_two_way(merged - 0.0001, 0.99), Verdict::Related);
        assert_eq!(judge_two_way(0.9, close - 0.01), Verdict::Related);
        assert_eq!(judge_two_way(SEMANTIC.related, 0.5), Verdict::Related);
        assert_eq!(judge_two_way(0.2, 0.5), Verdict::New);
        // Without a model, the words decide: a copy under another title is a duplicate,
        // two notes of one author sharing their phrasing (under half their words) are not.
        assert_eq!(
            judge_between_notes((0.5, KEYWORDS), 0.9, 0.8),
            Verdict::Duplicate
        );
        assert_eq!(
            judge_between_notes((0.5, KEYWORDS), 0.45, 0.45),
            Verdict::Related
        );
        let keywords = PairEvidence {
            best: None,
            draft_covered: None,
            note_covered: None,
            ..ev(0.0, 0.0, 1.0, 1.0)
        };
        assert_eq!(score(&keywords), (1.0, KEYWORDS));
        assert_eq!(likeness(&keywords), 0.25);
        // The same title and few words in common (`go/json.md` and `javascript/json.md`):
        // not a duplicate, however high the lead lifts its likeness; with words, one.
        assert_eq!(judge((0.5, KEYWORDS), 0.4, 0.04), Verdict::Related);
        assert_eq!(judge((0.5, KEYWORDS), 0.4, 0.2), Verdict::Duplicate);
        assert!(reason(&ev(0.9, 0.8, 0.5, 1.0)).contains("lease"));
        assert!(
            reason(&ev(0.05, -0.001, 0.5, 1.0))
                .starts_with("passages align 0.05 (draft in note) and 0.00 (note in draft)"),
            "{}",
            reason(&ev(0.05, -0.001, 0.5, 1.0))
        );
        // A note asked about is not called a draft.
        let of_note = reason_from_note(&ev(0.9, 0.8, 0.5, 1.0));
        assert!(
            of_note.starts_with("passages align 0.90 (note in other) and 0.80 (other in note)")
                && of_note.contains("of the note's rare words")
                && !of_note.contains("draft"),
            "{of_note}"
        );
    }

    #[test]
    fn a_candidate_that_stands_out_gains_its_lead() {
        let raw = [0.6, 0.35, 0.2, 0.2, 0.1];
        let led = with_lead(&raw);
        assert!((led[0] - (0.6 + MAX_LEAD)).abs() < 1e-9, "capped");
        assert!((led[1] - (0.35 + STANDOUT * 0.15)).abs() < 1e-9);
        // At or below the fourth: nothing added, nothing taken.
        assert_eq!(&led[2..], &raw[2..]);
        // Without a crowd to stand out from, nothing is added.
        assert_eq!(with_lead(&raw[..3]), raw[..3].to_vec());
    }
}
