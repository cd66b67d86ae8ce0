//! Tauri's build step, plus the list of commands the panel may call: every command named
//! here gets an `allow-<name>` permission, and only those granted in `capabilities/` work.
//! Also the commit `About Brain` shows (`BRAIN_COMMIT`).

/// The app's commands; `src/commands.rs` defines them and `capabilities/panel.json` grants them.
const COMMANDS: &[&str] = &[
    "search",
    "preview",
    "open",
    "reveal",
    "copy",
    "status",
    "reindex",
    "hide_panel",
    "create_brain",
    "choose_folder",
    "download_model",
    "history",
    "context",
    "capture_types",
    "capture",
];

fn main() {
    commit();
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).unwrap_or_else(|e| panic!("tauri build step failed: {e:#}"));
}

/// Sets `BRAIN_COMMIT` for the app: `$BRAIN_COMMIT`, else CI's `$GITHUB_SHA`, else what git
/// says HEAD is (rerun when HEAD moves); nothing outside a checkout.
fn commit() {
    println!("cargo:rerun-if-env-changed=BRAIN_COMMIT");
    println!("cargo:rerun-if-env-changed=GITHUB_SHA");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let given = ["BRAIN_COMMIT", "GITHUB_SHA"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    let commit = match given {
        Some(c) => Some(c),
        None => {
            // HEAD, the branch it names and packed-refs: a commit or a checkout changes one.
            let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
            watch.extend(git(&["symbolic-ref", "-q", "HEAD"]));
            for name in watch {
                if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
                    if std::path::Path::new(&path).exists() {
                        println!("cargo:rerun-if-changed={path}");
                    }
                }
            }
            git(&["rev-parse", "HEAD"])
        }
    };
    if let Some(c) = commit {
        let short: String = c.chars().take(12).collect();
        println!("cargo:rustc-env=BRAIN_COMMIT={short}");
    }
}
