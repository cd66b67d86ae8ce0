//! The evaluation query sets: Cranfield (from the shared corpus, with its judgments) and
//! two sets written for tldr (names, paraphrases), compiled in from `eval/*.tsv`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One judged query.
#[derive(Debug, Clone)]
pub struct EvalQuery {
    /// What is searched.
    pub text: String,
    /// Paths (relative to the corpus notes folder) that answer it.
    pub relevant: HashSet<String>,
}

/// A named set of queries over one corpus.
#[derive(Debug, Clone)]
pub struct QuerySet {
    /// `cranfield`, `tldr-keyword`, `tldr-paraphrase`.
    pub name: &'static str,
    /// Which corpus it runs on.
    pub corpus: Corpus,
    /// The queries.
    pub queries: Vec<EvalQuery>,
}

/// The corpora the sets run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Corpus {
    /// `corpora/tldr`: markdown pages, used as they are.
    Tldr,
    /// `corpora/cranfield`: XML abstracts, written out as one note per document.
    Cranfield,
}

impl Corpus {
    /// The folder name under the corpora dir.
    pub fn dir_name(self) -> &'static str {
        match self {
            Corpus::Tldr => "tldr",
            Corpus::Cranfield => "cranfield",
        }
    }
}

/// Names of every set, in table order.
pub const SET_NAMES: &[&str] = &["cranfield", "tldr-keyword", "tldr-paraphrase"];

const TLDR_KEYWORD: &str = include_str!("../../eval/tldr-keyword.tsv");
const TLDR_PARAPHRASE: &str = include_str!("../../eval/tldr-paraphrase.tsv");

/// Loads a set by name; `corpora` is the folder holding `tldr/` and `cranfield/`.
pub fn load(name: &str, corpora: &Path) -> Result<QuerySet> {
    match name {
        "tldr-keyword" => Ok(QuerySet {
            name: "tldr-keyword",
            corpus: Corpus::Tldr,
            queries: parse_tsv(TLDR_KEYWORD)?,
        }),
        "tldr-paraphrase" => Ok(QuerySet {
            name: "tldr-paraphrase",
            corpus: Corpus::Tldr,
            queries: parse_tsv(TLDR_PARAPHRASE)?,
        }),
        "cranfield" => Ok(QuerySet {
            name: "cranfield",
            corpus: Corpus::Cranfield,
            queries: cranfield_queries(corpora)?,
        }),
        other => Err(Error::InvalidInput(format!(
            "unknown eval set {other:?} (expected one of: {})",
            SET_NAMES.join(", ")
        ))),
    }
}

fn parse_tsv(text: &str) -> Result<Vec<EvalQuery>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (query, paths) = line.split_once('\t').ok_or_else(|| {
            Error::InvalidInput(format!("eval set line {}: expected query<TAB>paths", i + 1))
        })?;
        out.push(EvalQuery {
            text: query.trim().to_string(),
            relevant: paths.split_whitespace().map(str::to_string).collect(),
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
/// number queries by position, 1..225, not by their `<num>`).
fn cranfield_queries(corpora: &Path) -> Result<Vec<EvalQuery>> {
    let dir = corpora.join("cranfield");
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
        if let Some(rel) = relevant.remove(&(i + 1)) {
            out.push(EvalQuery {
                text: text.trim_end_matches(" .").to_string(),
                relevant: rel,
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

/// Writes the Cranfield abstracts as notes under `dest` (once; an existing folder is reused).
pub fn write_cranfield_notes(corpora: &Path, dest: &Path) -> Result<()> {
    if dest.join(".complete").exists() {
        return Ok(());
    }
    let xml = read(&corpora.join("cranfield").join("cran.all.1400.xml"))?;
    let docs = dest.join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| Error::io(&docs, e))?;
    for block in xml.split("<doc>").skip(1) {
        let Some(no) = tag(block, "docno") else {
            continue;
        };
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
    let marker = dest.join(".complete");
    std::fs::write(&marker, "").map_err(|e| Error::io(&marker, e))
}

/// The default corpora folder: `$BRAIN_CORPORA`, else `../shared/corpora` from here.
pub fn default_corpora() -> PathBuf {
    std::env::var_os("BRAIN_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/corpora"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_sets_parse_and_are_big_enough() {
        assert!(parse_tsv(TLDR_KEYWORD).unwrap().len() >= 30);
        assert!(parse_tsv(TLDR_PARAPHRASE).unwrap().len() >= 30);
    }

    #[test]
    fn tags_are_extracted() {
        assert_eq!(tag("<a> x y </a>", "a"), Some("x y"));
        assert_eq!(tag("<a>x", "a"), None);
    }
}
