//! Where the evaluation corpora are, and the notes folder each one becomes.
//!
//! Corpora are looked for, in order, in the folders given with `--corpora`, in
//! `$BRAIN_CORPORA` (a `:`-separated list), then in `../shared/corpora` and
//! `../corpora-dev` from the working folder. `tldr/` and `cranfield/` ship with the shared
//! corpora; notes corpora (`notes-mix/`, ...) are folders of markdown brought in under an
//! open licence and kept out of the repository (`eval/README.md` says where each is from).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::sets::{self, Corpus, QuerySet};
use crate::error::{Error, Result};

/// The folders corpora are looked for in, in order.
pub fn search_path(explicit: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = explicit.to_vec();
    if let Some(env) = std::env::var_os("BRAIN_CORPORA") {
        out.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    out.push(PathBuf::from("../shared/corpora"));
    out.push(PathBuf::from("../corpora-dev"));
    out
}

/// The folder holding `corpus` (the one that contains `tldr/`, `cranfield/`, ...), if any.
pub fn locate(corpus: Corpus, search: &[PathBuf]) -> Option<PathBuf> {
    search
        .iter()
        .map(|dir| dir.join(corpus.dir_name()))
        .find(|dir| dir.is_dir())
}

/// The error for a run that found no corpus at all in `search`: nothing to evaluate is bad
/// input, said with where brain looked and how to point it elsewhere.
pub fn none_found(search: &[PathBuf]) -> Error {
    let looked: Vec<String> = search.iter().map(|p| p.display().to_string()).collect();
    Error::InvalidInput(format!(
        "no evaluation corpus found in {} (relative to the working folder): pass --corpora \
         DIR or set BRAIN_CORPORA to a folder holding tldr/, cranfield/ or the notes \
         corpora (eval/README.md)",
        looked.join(", ")
    ))
}

/// The notes folder for `set`'s corpus (found at `found`), created under `base` on first
/// use. With `slice`, only the judged notes of the set plus an even spread of about that
/// many others (a quick run, as the tests do).
pub fn prepare(base: &Path, found: &Path, set: &QuerySet, slice: Option<usize>) -> Result<PathBuf> {
    let name = set.corpus.dir_name();
    let full = base.join(name);
    let source = match set.corpus {
        Corpus::Cranfield => {
            sets::write_cranfield_notes(found, &full)?;
            full.clone()
        }
        Corpus::Tldr | Corpus::Notes(_) => found.to_path_buf(),
    };
    match slice {
        None => {
            if source != full {
                copy_once(&source, &full)?;
            }
            Ok(full)
        }
        Some(n) => {
            let dest = base.join(format!(
                "{name}-{}-slice{n}-q{}",
                set.name,
                set.queries.len()
            ));
            slice_into(&source, &dest, set, n)?;
            Ok(dest)
        }
    }
}

fn copy_once(src: &Path, dest: &Path) -> Result<()> {
    let all = list_md(src)?;
    let Some(marker) = stale(src, dest, &all, "")? else {
        return Ok(());
    };
    for rel in &all {
        copy_file(src, dest, rel)?;
    }
    marker.finish()
}

/// Copies the judged notes plus an even spread of about `n` others.
fn slice_into(src: &Path, dest: &Path, set: &QuerySet, n: usize) -> Result<()> {
    let all = list_md(src)?;
    let judged: HashSet<&String> = set.queries.iter().flat_map(|q| q.relevant.iter()).collect();
    let mut which: Vec<&String> = judged.iter().copied().collect();
    which.sort();
    let which = which
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let Some(marker) = stale(src, dest, &all, &which)? else {
        return Ok(());
    };
    let step = (all.len() / n.max(1)).max(1);
    for (i, rel) in all.iter().enumerate() {
        if judged.contains(rel) || i % step == 0 {
            copy_file(src, dest, rel)?;
        }
    }
    marker.finish()
}

/// A copy's `.complete` marker, to be written once the copy is whole.
struct Marker {
    path: PathBuf,
    says: String,
}

impl Marker {
    fn finish(self) -> Result<()> {
        std::fs::write(&self.path, &self.says).map_err(|e| Error::io(&self.path, e))
    }
}

/// `None` when `dest` is a whole copy of `src` as it is now (the same folder, the same
/// notes by name, size and time, the same judged notes for a slice); else clears `dest`
/// and returns the marker to write once it is copied again. A copy keyed by the corpus's
/// name alone was reused for another folder of that name, or after the notes changed.
fn stale(src: &Path, dest: &Path, all: &[String], judged: &str) -> Result<Option<Marker>> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(src)
        .unwrap_or_else(|_| src.to_path_buf())
        .hash(&mut h);
    judged.hash(&mut h);
    for rel in all {
        let meta = std::fs::metadata(src.join(rel)).map_err(|e| Error::io(src.join(rel), e))?;
        rel.hash(&mut h);
        meta.len().hash(&mut h);
        crate::index::walk::mtime_ns(&meta).hash(&mut h);
    }
    let says = format!("{:016x}\n", h.finish());
    let path = dest.join(".complete");
    if std::fs::read_to_string(&path).is_ok_and(|was| was == says) {
        return Ok(None);
    }
    match std::fs::remove_dir_all(dest) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dest, e)),
    }
    Ok(Some(Marker { path, says }))
}

fn copy_file(src: &Path, dest: &Path, rel: &str) -> Result<()> {
    let to = dest.join(rel);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    std::fs::copy(src.join(rel), &to)
        .map(|_| ())
        .map_err(|e| Error::io(&to, e))
}

/// Every `*.md` under `root`, relative and sorted.
fn list_md(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                if let Some(rel) = crate::index::walk::relative(root, &path) {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    // A corpus folder with no note would be copied as nothing, then judged against: say so.
    if out.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{}: the corpus holds no .md notes; point --corpora (or BRAIN_CORPORA) at a whole copy",
            root.display()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_corpus_anywhere_is_one_line_of_bad_input_saying_where_and_how() {
        let search = [PathBuf::from("/x/corpora"), PathBuf::from("../corpora-dev")];
        let err = none_found(&search);
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.starts_with("no evaluation corpus found in /x/corpora, ../corpora-dev "),
            "{msg}"
        );
        assert!(msg.contains("--corpora DIR or set BRAIN_CORPORA"), "{msg}");
        assert_eq!(locate(Corpus::Tldr, &search), None);
    }

    #[test]
    fn a_copy_follows_its_source_folder_and_its_notes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, dest) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("copy"),
        );
        for (root, text) in [(&a, "from a"), (&b, "from b, longer")] {
            std::fs::create_dir_all(root.join("x")).unwrap();
            std::fs::write(root.join("x/n.md"), text).unwrap();
        }
        let read = || std::fs::read_to_string(dest.join("x/n.md")).unwrap();
        copy_once(&a, &dest).unwrap();
        assert_eq!(read(), "from a");
        copy_once(&a, &dest).unwrap();
        copy_once(&b, &dest).unwrap();
        assert_eq!(read(), "from b, longer", "another folder of the same name");
        std::fs::remove_file(b.join("x/n.md")).unwrap();
        std::fs::write(b.join("x/m.md"), "moved").unwrap();
        copy_once(&b, &dest).unwrap();
        assert!(
            !dest.join("x/n.md").exists(),
            "a note deleted from the source stays"
        );
        assert!(dest.join("x/m.md").is_file());
        // A source with no note at all is refused in one line, not copied as nothing.
        let empty = dir.path().join("empty");
        std::fs::create_dir_all(empty.join("sub")).unwrap();
        let err = copy_once(&empty, &dest).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("holds no .md notes"), "{err}");
    }
}
