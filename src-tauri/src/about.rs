//! `About Brain`: the app's version and commit, the embedding model with the revision it is
//! pinned to (`audit/`), and the CLI the app ships or finds.

use std::path::Path;

/// The commit the app was built from (`build.rs`: `BRAIN_COMMIT`, `GITHUB_SHA` or git).
pub const COMMIT: Option<&str> = option_env!("BRAIN_COMMIT");

/// The About text for `model` (its manifest, when it is a known model) and `cli`.
pub fn text(version: &str, model: &str, cli: Option<&Path>) -> String {
    let pinned = match brain::model::manifest(model) {
        Ok(m) => format!("{model}: {} at revision {}", m.repo, m.revision),
        Err(e) => format!("{model}: {e}"),
    };
    let cli = cli.map_or_else(
        || "not found (Install Command Line Tool needs the app's own copy)".to_string(),
        |p| p.display().to_string(),
    );
    format!(
        "Brain {version} (commit {})\nModel {pinned}\nCLI: {cli}",
        COMMIT.unwrap_or("unknown")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_version_the_pinned_revision_and_the_cli() {
        let t = text(
            "0.1.0",
            "nomic-embed-text-v1.5",
            Some(Path::new("/Applications/Brain.app/Contents/MacOS/brain")),
        );
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("Brain 0.1.0 (commit "), "{t}");
        let m = brain::model::manifest("nomic-embed-text-v1.5").unwrap();
        assert_eq!(
            lines[1],
            format!(
                "Model nomic-embed-text-v1.5: {} at revision {}",
                m.repo, m.revision
            )
        );
        assert_eq!(
            lines[2],
            "CLI: /Applications/Brain.app/Contents/MacOS/brain"
        );
        assert!(text("0.1.0", "no-such-model", None).contains("CLI: not found"));
    }
}
