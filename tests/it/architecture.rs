//! The shape of the library, checked: no module imports from a module that imports it
//! (between the top-level modules, and between the children of any one module), and the
//! core never reaches up into the warm backend or the desktop layer. Read from the source
//! (`crate::` and `super::` paths, test modules left out), so a new arrow the wrong way
//! fails here with the file that drew it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::harness::{repo, walk};

/// Modules that must not use the layers above them.
const CORE: &[&str] = &[
    "config", "error", "note", "passage", "index", "search", "similar", "embed", "model", "engine",
    "eval", "kb", "usage", "date", "text",
];
/// The layers above the core.
const ABOVE: &[&str] = &["service", "desktop"];

/// A module path (`search::bm25`) for a library source file, or `None` for the binary's.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    if parts.first().is_some_and(|p| p == "cli") || (parts.is_empty() && stem == "main") {
        return None;
    }
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    Some(parts)
}

/// The source without comments (a doc link is not an import) and without its
/// `#[cfg(test)]` modules and items (tests may use anything).
fn without_tests(text: &str) -> String {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // Skip the attribute and the item it guards: up to the end of its first balanced
        // `{ ... }` block, or its `;`.
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 && i > "#[cfg(test)]".len() => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every `crate::...` or `super::...` path in `text`, resolved against `module`.
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for start in ["crate::", "super::"] {
        for (at, _) in text.match_indices(start) {
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let path: String = text[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segs = path.split("::").filter(|s| !s.is_empty());
            let first = segs.next().unwrap_or("");
            // `super` in module a::b (`a/b.rs` or `a/b/mod.rs`) is `a`.
            let mut base: Vec<String> = if first == "crate" {
                Vec::new()
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            for s in segs {
                if s == "super" {
                    base.pop();
                } else {
                    base.push(s.to_string());
                }
            }
            out.push(base);
        }
    }
    out
}

/// A module's path, `["search", "bm25"]`.
type Module = Vec<String>;

/// Module -> modules it references, as paths of modules that exist, for the crate whose
/// sources are in `src` (relative to the repository).
fn graph(src: &str) -> (BTreeSet<Module>, BTreeMap<Module, BTreeSet<Module>>) {
    let src = repo().join(src);
    let mut sources = Vec::new();
    for file in walk(&src) {
        if let Some(m) = module_of(&src, &file) {
            let text = std::fs::read_to_string(&file).expect("read source");
            sources.push((m, without_tests(&text)));
        }
    }
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, text) in &sources {
        for mut r in references(m, text) {
            // The longest prefix that names a module (the rest is an item inside it).
            while !r.is_empty() && !modules.contains(&r) {
                r.pop();
            }
            if !r.is_empty() && &r != m {
                edges.entry(m.clone()).or_default().insert(r);
            }
        }
    }
    (modules, edges)
}

/// The arrows between the modules directly under `parent` (`[]` for the top level): an
/// arrow from anything inside child A to anything inside child B counts as A -> B.
fn level(
    parent: &[String],
    edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let child = |m: &Vec<String>| -> Option<String> {
        (m.len() > parent.len() && m.starts_with(parent)).then(|| m[parent.len()].clone())
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in edges {
        let Some(a) = child(from) else { continue };
        for to in tos {
            if let Some(b) = child(to) {
                if a != b {
                    out.entry(a.clone()).or_default().insert(b);
                }
            }
        }
    }
    out
}

/// A cycle through `start`, if there is one.
fn cycle_through(start: &str, g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in g.get(&node).into_iter().flatten() {
            if next == start {
                let mut p = path.clone();
                p.push(start.to_string());
                return Some(p);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_from_a_module_that_imports_it() {
    let mut cycles = Vec::new();
    // The library, and the app crate (its binary shell has no modules of its own).
    for (src, at_least) in [("src", 30), ("src-tauri/src", 8)] {
        let (modules, edges) = graph(src);
        assert!(
            modules.len() >= at_least,
            "too few modules in {src}: {modules:?}"
        );
        let mut parents: BTreeSet<Module> = modules.clone();
        parents.insert(Vec::new());
        for parent in &parents {
            let g = level(parent, &edges);
            for node in g.keys() {
                if let Some(c) = cycle_through(node, &g) {
                    let at = parent.join("::");
                    cycles.push(format!("{src}: under crate::{at}: {}", c.join(" -> ")));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_core_never_reaches_up_into_the_service_or_the_desktop() {
    let (_, edges) = graph("src");
    let top = level(&[], &edges);
    let mut wrong = Vec::new();
    for core in CORE {
        for to in top.get(*core).into_iter().flatten() {
            if ABOVE.contains(&to.as_str()) {
                wrong.push(format!("{core} -> {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "core modules using the layers above: {wrong:?}"
    );
}

#[test]
fn the_checker_sees_cycles_and_skips_tests() {
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        references(
            &m("index::sync"),
            "use crate::search::query::Query; super::walk::x"
        ),
        vec![m("search::query::Query"), m("index::walk::x")]
    );
    let text = "use crate::a; // see crate::z\n/// [`crate::y`]\n#[cfg(test)]\n\
                mod tests { use crate::b; fn f() { {} } }\nuse crate::c;";
    assert_eq!(
        references(&m("x"), &without_tests(text)),
        vec![m("a"), m("c")]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert!(cycle_through("a", &g).is_some());
    g.insert("b".to_string(), BTreeSet::new());
    assert!(cycle_through("a", &g).is_none());
}

/// The quoted names between `start` and the `end` that follows it in `text`.
fn names_between(text: &str, start: &str, end: &str) -> BTreeSet<String> {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start:?}")) + start.len();
    let to = from
        + text[from..]
            .find(end)
            .unwrap_or_else(|| panic!("no {end:?}"));
    text[from..to]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A command the panel calls must be listed in build.rs (which makes its permission),
/// registered in `generate_handler!`, granted in the capability, and defined: a command
/// missing from any one fails only at run time, in the window.
#[test]
fn every_app_command_is_listed_registered_granted_and_defined() {
    let app = repo().join("src-tauri");
    let read = |p: &str| std::fs::read_to_string(app.join(p)).unwrap();
    let listed = names_between(&read("build.rs"), "const COMMANDS: &[&str] = &[", "];");
    let lib = read("src/lib.rs");
    let from = lib.find("generate_handler![").expect("generate_handler!");
    let to = from + lib[from..].find("])").expect("end of generate_handler!");
    let registered: BTreeSet<String> = lib[from..to]
        .split("commands::")
        .skip(1)
        .map(|s| {
            s.split([',', ' ', '\n', ']'])
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let capability: serde_json::Value =
        serde_json::from_str(&read("capabilities/panel.json")).unwrap();
    let granted: BTreeSet<String> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
        .map(|p| p.replace('-', "_"))
        .collect();
    let commands = read("src/commands.rs");
    let defined: BTreeSet<String> = commands
        .split("#[tauri::command")
        .skip(1)
        .filter_map(|s| s.split("pub fn ").nth(1))
        .map(|s| s.split('(').next().unwrap_or("").to_string())
        .collect();
    assert!(listed.len() >= 10, "{listed:?}");
    assert_eq!(registered, listed, "generate_handler! vs build.rs");
    assert_eq!(granted, listed, "capabilities/panel.json vs build.rs");
    assert_eq!(defined, listed, "commands.rs vs build.rs");
}
