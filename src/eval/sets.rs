//! The evaluation query sets, compiled in from `eval/*.jsonl` (one judged query per line)
//! plus Cranfield's own 225 queries with their published judgments.
//!
//! A line: `{"class": "paraphrase", "query": "...", "relevant": ["path", ...],
//! "judged": ["path", ...], "half": "tune"}`. `relevant` holds every note judged to
//! answer the query, `judged` every other note that was looked at and judged not to (the
//! pooled judging of `brain eval --pool`); a note in neither has not been judged. `half`
//! says whether the query may be tuned on (`tune`) or is held back (`test`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One judged query.
#[derive(Debug, Clone)]
pub struct EvalQuery {
    /// What is searched.
    pub text: String,
    /// What kind of query: `paraphrase`, `names`, `words` (or `questions` for Cranfield).
    pub class: String,
    /// Paths (relative to the corpus notes folder) that answer it.
    pub relevant: HashSet<String>,
    /// Paths judged not to answer it.
    pub judged: HashSet<String>,
    /// Tuned on, or held back.
    pub half: Half,
}

impl EvalQuery {
    /// Whether `path` was judged, either way.
    pub fn is_judged(&self, path: &str) -> bool {
        self.relevant.contains(path) || self.judged.contains(path)
    }
}

/// Which half of the queries a query is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Half {
    /// Used while developing and tuning.
    Tune,
    /// Held back: reported, never tuned on.
    Test,
}

/// A named set of queries over one corpus.
#[derive(Debug, Clone)]
pub struct QuerySet {
    /// The set's name (`tldr`, `notes-mix`, ...).
    pub name: &'static str,
    /// Which corpus it runs on.
    pub corpus: Corpus,
    /// The queries.
    pub queries: Vec<EvalQuery>,
}

/// The corpora the sets run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Corpus {
    /// `tldr/`: markdown pages, used as they are.
    Tldr,
    /// `cranfield/`: XML abstracts, written out as one note per document.
    Cranfield,
    /// A folder of markdown notes under a corpora folder, used as it is.
    Notes(&'static str),
}

impl Corpus {
    /// The folder name under a corpora folder.
    pub fn dir_name(self) -> &'static str {
        match self {
            Corpus::Tldr => "tldr",
            Corpus::Cranfield => "cranfield",
            Corpus::Notes(name) => name,
        }
    }
}

/// A set: its name, its corpus, and its lines (`None`: Cranfield's own queries).
struct Known {
    name: &'static str,
    corpus: Corpus,
    lines: Option<&'static str>,
}

/// Every set, in table order.
const KNOWN: &[Known] = &[
    Known {
        name: "tldr",
        corpus: Corpus::Tldr,
        lines: Some(include_str!("../../eval/tldr.jsonl")),
    },
    Known {
        name: "cranfield-new",
        corpus: Corpus::Cranfield,
        lines: Some(include_str!("../../eval/cranfield-new.jsonl")),
    },
    Known {
        name: "notes-mix",
        corpus: Corpus::Notes("notes-mix"),
        lines: Some(include_str!("../../eval/notes-mix.jsonl")),
    },
    Known {
        name: "jaebradley-notes",
        corpus: Corpus::Notes("jaebradley-notes"),
        lines: Some(include_str!("../../eval/jaebradley-notes.jsonl")),
    },
    Known {
        name: "notes-mix-hard",
        corpus: Corpus::Notes("notes-mix"),
        lines: Some(include_str!("../../eval/notes-mix-hard.jsonl")),
    },
    Known {
        name: "jaebradley-hard",
        corpus: Corpus::Notes("jaebradley-notes"),
        lines: Some(include_str!("../../eval/jaebradley-hard.jsonl")),
    },
    Known {
        name: "til-mix",
        corpus: Corpus::Notes("til-mix"),
        lines: Some(include_str!("../../eval/til-mix.jsonl")),
    },
    Known {
        name: "yutsuten-notes",
        corpus: Corpus::Notes("yutsuten-notes"),
        lines: Some(include_str!("../../eval/yutsuten-notes.jsonl")),
    },
    Known {
        name: "cranfield",
        corpus: Corpus::Cranfield,
        lines: None,
    },
    Known {
        name: "tldr-keyword",
        corpus: Corpus::Tldr,
        lines: Some(include_str!("../../eval/tldr-keyword.jsonl")),
    },
    Known {
        name: "tldr-paraphrase",
        corpus: Corpus::Tldr,
        lines: Some(include_str!("../../eval/tldr-paraphrase.jsonl")),
    },
];

/// Names of every set, in table order.
pub fn names() -> Vec<&'static str> {
    KNOWN.iter().map(|k| k.name).collect()
}

/// The corpus a set runs on.
pub fn corpus_of(name: &str) -> Result<Corpus> {
    known(name).map(|k| k.corpus)
}

fn known(name: &str) -> Result<&'static Known> {
    KNOWN.iter().find(|k| k.name == name).ok_or_else(|| {
        Error::InvalidInput(format!(
            "unknown eval set {name:?} (expected one of: {})",
            names().join(", ")
        ))
    })
}

/// Loads a set by name; `corpus_dir` is the folder its corpus is in (Cranfield's own
/// queries and judgments are read from there).
pub fn load(name: &str, corpus_dir: &Path) -> Result<QuerySet> {
    let k = known(name)?;
    let queries = match k.lines {
        Some(text) => parse_lines(k.name, text)?,
        None => cranfield_queries(corpus_dir)?,
    };
    Ok(QuerySet {
        name: k.name,
        corpus: k.corpus,
        queries,
    })
}

/// One line of a set file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    class: String,
    query: String,
    relevant: Vec<String>,
    #[serde(default)]
    judged: Vec<String>,
    half: Half,
    /// Why the relevant notes answer it, for the person reading the file.
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
    /// How close a rewrite is (drafts); ignored here.
    #[serde(default)]
    #[allow(dead_code)]
    closeness: Option<String>,
}

fn parse_lines(set: &str, text: &str) -> Result<Vec<EvalQuery>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(line)
            .map_err(|e| Error::InvalidInput(format!("eval/{set}.jsonl line {}: {e}", i + 1)))?;
        if l.relevant.is_empty() {
            return Err(Error::InvalidInput(format!(
                "eval/{set}.jsonl line {}: no relevant note for {:?}",
                i + 1,
                l.query
            )));
        }
        out.push(EvalQuery {
            text: l.query,
            class: l.class,
            relevant: l.relevant.into_iter().collect(),
            judged: l.judged.into_iter().collect(),
            half: l.half,
        });
    }
    Ok(out)
}

/// The text between `<tag>` and `</tag>` in `block`, whitespace collapsed.
fn tag<'a>(block: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = block.find(&open)? + open.len();
    let end = block[start..].find(&close)? + start;
    Some(block[start..end].trim())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// Cranfield's queries in file order, with their judged documents (grade >= 1; the qrels
/// number queries by position, 1..225, not by their `<num>`). All are in the tune half:
/// round one tuned on them.
fn cranfield_queries(dir: &Path) -> Result<Vec<EvalQuery>> {
    let queries = read(&dir.join("cran.qry.xml"))?;
    let qrels = read(&dir.join("cranqrel.trec.txt"))?;
    let mut relevant: BTreeMap<usize, HashSet<String>> = BTreeMap::new();
    for line in qrels.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [q, _, doc, grade] = f[..] {
            if grade.parse::<i32>().unwrap_or(0) >= 1 {
                if let Ok(q) = q.parse() {
                    relevant.entry(q).or_default().insert(cranfield_path(doc));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, block) in queries.split("<top>").skip(1).enumerate() {
        let text = tag(block, "title")
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        // A query with no words would stop the whole run at its search: it is named.
        if !text.chars().any(char::is_alphanumeric) {
            return Err(Error::InvalidInput(format!(
                "{}: query {} has an empty <title>: give it its text, or remove it",
                dir.join("cran.qry.xml").display(),
                i + 1
            )));
        }
        if let Some(rel) = relevant.remove(&(i + 1)) {
            out.push(EvalQuery {
                text: text.trim_end_matches(" .").to_string(),
                class: "questions".into(),
                relevant: rel,
                judged: HashSet::new(),
                half: Half::Tune,
            });
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidInput(format!(
            "no judged queries found in {}",
            dir.display()
        )));
    }
    Ok(out)
}

/// The note path a Cranfield document is written to.
pub fn cranfield_path(docno: &str) -> String {
    format!("docs/{docno}.md")
}

/// Writes the Cranfield abstracts as notes under `dest` (once per version of the source
/// file: the marker holds its size and time, and a copy of another version is replaced).
pub fn write_cranfield_notes(cranfield: &Path, dest: &Path) -> Result<()> {
    let source = cranfield.join("cran.all.1400.xml");
    let meta = std::fs::metadata(&source).map_err(|e| Error::io(&source, e))?;
    let stamp = format!(
        "{} {:?}",
        meta.len(),
        meta.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    );
    let marker = dest.join(".complete");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == stamp) {
        return Ok(());
    }
    let xml = read(&source)?;
    let docs = dest.join("docs");
    if docs.exists() {
        std::fs::remove_dir_all(&docs).map_err(|e| Error::io(&docs, e))?;
    }
    std::fs::create_dir_all(&docs).map_err(|e| Error::io(&docs, e))?;
    for block in xml.split("<doc>").skip(1) {
        let Some(no) = tag(block, "docno") else {
            continue;
        };
        // A number, as in the collection: anything else would name a file elsewhere
        // (`../../x` writes outside the data dir).
        let no = no.trim();
        if no.is_empty() || !no.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::InvalidInput(format!(
                "{}: <docno> {no:?} is not a number: give the Cranfield collection as published",
                source.display()
            )));
        }
        let title = tag(block, "title")
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let text = tag(block, "text").unwrap_or("");
        let path = dest.join(cranfield_path(no));
        let body = format!("# {}\n\n{}\n", title.trim_end_matches(" ."), text);
        std::fs::write(&path, body).map_err(|e| Error::io(&path, e))?;
    }
    std::fs::write(&marker, stamp).map_err(|e| Error::io(&marker, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cranfield_query_without_words_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("cran.qry.xml"),
            "<top><num>1</num><title>what is lift .</title></top><top><num>2</num><title> . </title></top>",
        )
        .unwrap();
        std::fs::write(dir.path().join("cranqrel.trec.txt"), "1 0 5 1\n2 0 6 1\n").unwrap();
        let err = cranfield_queries(dir.path()).unwrap_err().to_string();
        assert!(err.contains("query 2 has an empty <title>"), "{err}");
    }

    #[test]
    fn cranfield_notes_follow_their_source_and_stay_in_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (src, dest) = (dir.path().join("src"), dir.path().join("out"));
        std::fs::create_dir_all(&src).unwrap();
        let xml = src.join("cran.all.1400.xml");
        let doc =
            |no: &str| format!("<doc><docno>{no}</docno><title>T{no}</title><text>x</text></doc>");
        std::fs::write(&xml, doc("1")).unwrap();
        write_cranfield_notes(&src, &dest).unwrap();
        assert!(dest.join("docs/1.md").is_file());
        // Another version of the source: the copy follows it.
        std::fs::write(&xml, format!("{}{}", doc("1"), doc("22"))).unwrap();
        write_cranfield_notes(&src, &dest).unwrap();
        assert!(dest.join("docs/22.md").is_file());
        // A docno that is a path is refused, and nothing is written outside.
        std::fs::write(&xml, doc("../../escaped")).unwrap();
        let err = write_cranfield_notes(&src, &dest).unwrap_err().to_string();
        assert!(err.contains("is not a number"), "{err}");
        assert!(!dir.path().join("escaped.md").exists());
    }

    #[test]
    fn every_committed_set_parses_and_is_split() {
        let mut test_half = 0;
        for k in KNOWN {
            let Some(text) = k.lines else { continue };
            let queries = parse_lines(k.name, text).unwrap();
            assert!(queries.len() >= 30, "{}: {}", k.name, queries.len());
            for q in &queries {
                assert!(
                    ["paraphrase", "names", "words"].contains(&q.class.as_str()),
                    "{}: class {:?}",
                    k.name,
                    q.class
                );
                assert!(
                    q.relevant.is_disjoint(&q.judged),
                    "{}: {:?}",
                    k.name,
                    q.text
                );
            }
            test_half += queries.iter().filter(|q| q.half == Half::Test).count();
        }
        assert!(test_half >= 150, "held-back queries: {test_half}");
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let err = parse_lines("x", "{\"class\":\"names\"}\n").unwrap_err();
        assert!(err.to_string().starts_with("eval/x.jsonl line 1:"), "{err}");
        let err = parse_lines(
            "x",
            "{\"class\":\"names\",\"query\":\"q\",\"relevant\":[],\"half\":\"tune\"}",
        )
        .unwrap_err();
        assert!(err.to_string().contains("no relevant note"), "{err}");
        assert!(known("nope").is_err());
    }
}
