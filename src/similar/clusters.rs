//! `brain similar --all`: the groups of notes that duplicate each other, found from the
//! stored vectors alone (no embedding), or without a model from titles that are the same
//! words and notes that share half their words.

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;

use super::between::{Pairs, Remembered};
use super::terms;
use super::verdict::{self, CLUSTER_AT, PAIR_MIN};
use super::Cluster;
use crate::error::Result;
use crate::index::Reader;
use crate::search::Matrix;

/// Candidate partners kept per note, the closest first.
const PARTNERS: usize = 5;

/// Clusters of duplicates, largest first; by titles when `matrix` is `None`.
pub(crate) fn find_clusters(
    reader: &Reader<'_>,
    matrix: Option<&Matrix>,
    remembered: &Remembered,
) -> Result<Vec<Cluster>> {
    let mut clusters = match matrix {
        Some(m) => by_meaning(reader, m, remembered)?,
        None => by_title(reader)?,
    };
    // Scores compared as shown (four decimals: a backend's and a process's float sums may
    // differ below that), then paths: the same brain lists its clusters in one order, run
    // after run, which a script diffing the output relies on.
    let shown = |x: f64| (x * 1e4).round();
    clusters.sort_by(|a, b| {
        b.0.paths
            .len()
            .cmp(&a.0.paths.len())
            .then(shown(b.1).total_cmp(&shown(a.1)))
            .then_with(|| a.0.paths.cmp(&b.0.paths))
    });
    Ok(clusters.into_iter().map(|(c, _)| c).collect())
}

/// Without a model: notes whose titles are the same words, joined two by two when one
/// holds [`verdict::NOTES_WORDS`] of the other's words: when `brain similar` of either
/// note, without a model, calls the other a duplicate (the overlap is one-way, so the
/// other note's `similar` may say related). A folder of topics has many `install.md` or `json.md` (`go/json.md`,
/// `javascript/json.md`), and a title alone once grouped them as "merge these".
fn by_title(reader: &Reader<'_>) -> Result<Vec<(Cluster, f64)>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, path) in reader.title_keys()? {
        if !key.trim().is_empty() {
            groups.entry(key).or_default().push(path);
        }
    }
    let total = reader.note_count()?;
    let mut df_cache = HashMap::new();
    let mut dup: Vec<(i64, i64, f64, String)> = Vec::new();
    for paths in groups.into_values().filter(|p| p.len() > 1) {
        let mut notes = Vec::with_capacity(paths.len());
        for path in &paths {
            let Some(id) = reader.note_id(path)? else {
                continue;
            };
            let (title, body) = reader.title_and_body(id)?;
            let text = format!("{title}\n{body}");
            let (_, words) = terms::draft_terms_cached(reader, &text, total, true, &mut df_cache)?;
            notes.push((id, text, words));
        }
        for (i, (a, text_a, words_a)) in notes.iter().enumerate() {
            for (b, text_b, words_b) in &notes[i + 1..] {
                // Either way, as `similar NOTE` judges from the note asked about: a pair
                // is grouped when either note's `similar` calls the other a duplicate.
                let overlap =
                    verdict::shown_words(words_a.overlap(text_b).max(words_b.overlap(text_a)));
                if overlap >= verdict::NOTES_WORDS {
                    let reason = format!("titles are the same words; words overlap {overlap:.2}");
                    dup.push((*a.min(b), *a.max(b), overlap, reason));
                }
            }
        }
    }
    grouped(reader, dup)
}

fn by_meaning(
    reader: &Reader<'_>,
    m: &Matrix,
    remembered: &Remembered,
) -> Result<Vec<(Cluster, f64)>> {
    let notes = m.note_ids();
    // Every pair of passages once, in parallel: the only quadratic step, and a plain scan.
    let close: Vec<(i64, i64, f32)> = (0..notes.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            (i + 1..notes.len())
                .filter(move |&j| notes[j] != notes[i])
                .filter_map(move |j| {
                    let s = m.row_dot(i, j);
                    (s >= PAIR_MIN).then(|| (notes[i].min(notes[j]), notes[i].max(notes[j]), s))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut best: HashMap<(i64, i64), f32> = HashMap::new();
    for (a, b, s) in close {
        let e = best.entry((a, b)).or_insert(s);
        *e = e.max(s);
    }
    let mut partners: HashMap<i64, Vec<(f32, i64)>> = HashMap::new();
    for (&(a, b), &s) in &best {
        partners.entry(a).or_default().push((s, b));
        partners.entry(b).or_default().push((s, a));
    }
    let mut pairs: HashSet<(i64, i64)> = HashSet::new();
    for (&a, list) in partners.iter_mut() {
        list.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        for &(_, b) in list.iter().take(PARTNERS) {
            pairs.insert((a.min(b), a.max(b)));
        }
    }
    let mut pairs: Vec<(i64, i64)> = pairs.into_iter().collect();
    pairs.sort_unstable();

    let mut scorer = Pairs::new(reader, m, remembered)?;
    let mut dup: Vec<(i64, i64, f64, String)> = Vec::new();
    for (a, b) in pairs {
        // "first" and "second" in the reason are the pair in the order `--all` lists them.
        let (a, b) = match reader.path_of(a)? <= reader.path_of(b)? {
            true => (a, b),
            false => (b, a),
        };
        if let Some(two) = scorer.score(a, b)? {
            if two.score >= CLUSTER_AT {
                dup.push((a, b, two.score, two.reason));
            }
        }
    }

    scorer.remember();
    grouped(reader, dup)
}

/// The clusters the duplicate pairs `(a, b, score, reason)` make, each with its best pair's
/// score and reason.
fn grouped(reader: &Reader<'_>, dup: Vec<(i64, i64, f64, String)>) -> Result<Vec<(Cluster, f64)>> {
    // Union-find over the duplicate pairs.
    let mut parent: HashMap<i64, i64> = HashMap::new();
    fn find(parent: &mut HashMap<i64, i64>, x: i64) -> i64 {
        let p = *parent.get(&x).unwrap_or(&x);
        if p == x {
            return x;
        }
        let r = find(parent, p);
        parent.insert(x, r);
        r
    }
    for &(a, b, _, _) in &dup {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent.insert(ra.max(rb), ra.min(rb));
        }
    }
    /// A cluster as it grows: its notes, and its best pair with that pair's score and reason.
    struct Group {
        ids: Vec<i64>,
        score: f64,
        reason: String,
        pair: (i64, i64),
    }
    let mut groups: HashMap<i64, Group> = HashMap::new();
    for (a, b, score, reason) in dup {
        let r = find(&mut parent, a);
        let g = groups.entry(r).or_insert_with(|| Group {
            ids: Vec::new(),
            score: f64::NEG_INFINITY,
            reason: String::new(),
            pair: (a, b),
        });
        g.ids.extend([a, b]);
        if score > g.score {
            g.score = score;
            g.reason = reason;
            g.pair = (a, b);
        }
    }
    let mut out = Vec::new();
    for Group {
        mut ids,
        score,
        reason,
        pair: (a, b),
    } in groups.into_values()
    {
        ids.sort_unstable();
        ids.dedup();
        let mut paths = Vec::with_capacity(ids.len());
        for &id in &ids {
            paths.push(reader.path_of(id)?);
        }
        paths.sort();
        // Of three notes or more, the reason is one pair's: it says which ("first" and
        // "second" once read as the first two listed, which they often were not).
        let reason = match ids.len() {
            2 => reason,
            _ => format!(
                "{} and {}: {reason}",
                reader.path_of(a)?,
                reader.path_of(b)?
            ),
        };
        out.push((Cluster { paths, reason }, score));
    }
    Ok(out)
}
