//! The real all-MiniLM-L6-v2 (from scripts/test-model.sh) through the real verify path:
//! import, list, verify, golden vectors, tampering, odd input, and no network.

use crate::harness::*;
use brain::embed::{self, LoadOptions};
use brain::model::ModelError;

const MODEL: &str = "all-minilm-l6-v2";

#[test]
fn imported_model_lists_as_installed_and_verified() {
    let b = Brain::new();
    let before: serde_json::Value = b.ok(&["model", "list", "--json"]).json();
    let row = |v: &serde_json::Value| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == MODEL)
            .unwrap()
            .clone()
    };
    assert_eq!(row(&before)["installed"], false);

    b.import_model();
    let after: serde_json::Value = b.ok(&["model", "list", "--json"]).json();
    let r = row(&after);
    assert_eq!(r["installed"], true);
    assert_eq!(r["verified"], true);
    assert_eq!(r["dims"], 384);
    assert_eq!(r["device"], "cpu");
    let text = b.ok(&["model", "verify", MODEL]).stdout();
    assert!(text.contains("every file matches"), "{text}");
    assert!(
        b.models_dir()
            .join(MODEL)
            .join("1_Pooling/config.json")
            .is_file(),
        "hub layout kept"
    );
}

#[test]
fn vectors_match_sentence_transformers_documents_to_1e_5_queries_to_2e_4() {
    let b = Brain::new();
    b.import_model();
    let golden = read_json(&fixture("minilm_golden.json"));
    let texts: Vec<String> = golden["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let want = vectors(&golden["vectors"]);
    let model = embed::load(&b.config()).unwrap();
    assert_eq!(
        (model.name(), model.dim(), model.device().as_str()),
        (MODEL, 384, "cpu")
    );

    // The whole list at once (mixed lengths in one batch), then each text on its own.
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = model.embed_documents(&refs).unwrap();
    for (i, (got, want)) in batch.iter().zip(&want).enumerate() {
        let d = max_diff(got, want);
        assert!(
            d < 1e-5,
            "text {i} ({:?}...): max diff {d}",
            &texts[i].chars().take(30).collect::<String>()
        );
    }
    // Queries: the first through candle (exact), the rest through the few-token pass,
    // whose weights are f16: within 2e-4, and the same direction to seven nines.
    for (text, want) in texts.iter().zip(&want) {
        let got = model.embed_query(text).unwrap();
        let cosine: f32 = got.iter().zip(want).map(|(a, b)| a * b).sum();
        assert!(
            max_diff(&got, want) < 2e-4 && cosine > 0.99999,
            "query {text:?}: max diff {}, cosine {cosine}",
            max_diff(&got, want)
        );
    }
    model.prepare_queries().unwrap();
    let few = model.embed_query(&texts[0]).unwrap();
    let exact = model
        .embed_documents(&[texts[0].as_str()])
        .unwrap()
        .remove(0);
    assert!(
        max_diff(&few, &exact) < 2e-4 && max_diff(&few, &exact) > 0.0,
        "a short query takes the few-token pass once prepared"
    );
    // A draft's passages (never stored): the short ones through the pass, any over 64
    // tokens through candle, all in input order.
    let unstored = model.embed_unstored(&refs).unwrap();
    assert_eq!(unstored.len(), want.len());
    let mut took_the_pass = 0;
    for (i, (got, want)) in unstored.iter().zip(&want).enumerate() {
        let d = max_diff(got, want);
        assert!(d < 2e-4, "unstored text {i}: max diff {d}");
        took_the_pass += usize::from(max_diff(got, &batch[i]) > 0.0);
    }
    assert!(took_the_pass > 0, "short passages of a draft take the pass");
}

#[test]
fn a_flipped_byte_refuses_to_load_with_exit_2_naming_file_and_hashes() {
    let b = Brain::new();
    b.import_model();
    // Loaded once: the files' identities are recorded as verified.
    b.ok(&["model", "embed", "--model", MODEL, "hello"]);
    let weights = b.models_dir().join(MODEL).join("model.safetensors");
    flip_byte(&weights, 40_000_000);
    // `status` and `install --check` say so without hashing (they said "installed", "ok").
    let status = b.ok(&["status"]).stdout();
    assert!(
        status.contains("changed since last verified: model.safetensors"),
        "{status}"
    );
    let check = b.run(&["install", "--check"]);
    assert!(
        check
            .stdout()
            .lines()
            .any(|l| l.starts_with("model") && l.contains("changed")),
        "{}",
        check.stdout()
    );

    let out = b.run(&["model", "embed", "--model", MODEL, "hello"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model.safetensors"), "{err}");
    assert!(
        err.contains("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

    let out = b.run(&["model", "verify", MODEL]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));

    match embed::load(&b.config()) {
        Err(brain::Error::Model(ModelError::Mismatch { file, .. })) => {
            assert!(file.ends_with("model.safetensors"))
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a tampered model loaded"),
    }
    // The cheap check only looks at sizes, so it still says installed; loading is what refuses.
    assert!(embed::is_installed(&b.config()));
    // Another size (appended to): damaged, and named, not "not installed".
    let tokenizer = b.models_dir().join(MODEL).join("tokenizer.json");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&tokenizer)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b" "))
        .unwrap();
    let status = b.ok(&["status"]).stdout();
    assert!(
        status.contains("damaged: model.safetensors, tokenizer.json changed since last verified"),
        "{status}"
    );
    let check = b.run(&["install", "--check"]).stdout();
    assert!(
        check
            .lines()
            .any(|l| l.starts_with("model") && l.contains("tokenizer.json written to")),
        "{check}"
    );
    // `model list` says it as status does (it said "installed no").
    let list = b.ok(&["model", "list"]).stdout();
    assert!(
        list.lines()
            .any(|l| l.contains(MODEL) && l.split_whitespace().any(|w| w == "damaged")),
        "{list}"
    );

    // A file the hub does not serve (the licence shipped with the wheel) is not promised
    // back by a fetch: its line says to import again, or, optional, to remove it.
    let b = Brain::new();
    b.import_model();
    let licence = b.models_dir().join(MODEL).join("LICENSE");
    flip_byte(&licence, 100);
    let out = b.run(&["model", "verify", MODEL]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LICENSE")
            && err.contains("it is optional (loading never reads it)")
            && err.contains("'brain model import all-minilm-l6-v2 DIR'")
            && !err.contains("downloads it again"),
        "{err}"
    );
}

/// A loaded model reads its token table from the mapped file, and a private mapping shows
/// later writes to that file: a process that keeps a model (the backend) refuses to embed
/// once the file was written to, instead of using bytes nobody hashed. A new install
/// renamed into place is another file: the loaded one is unchanged and keeps working.
#[test]
fn a_loaded_model_refuses_weights_written_to_after_it_was_verified() {
    let b = Brain::new();
    b.import_model();
    let weights = b.models_dir().join(MODEL).join("model.safetensors");
    let model = embed::load(&b.config()).expect("load");
    model.embed_query("cache stampede").expect("embed");

    let copy = weights.with_extension("copy");
    std::fs::copy(&weights, &copy).unwrap();
    std::fs::rename(&copy, &weights).unwrap();
    // (A second text may take the half-precision pass: not compared bit for bit.)
    model
        .embed_query("stampede of caches")
        .expect("a rename is not a write");

    let model = embed::load(&b.config()).expect("load the renamed-in file");
    // A chmod moves only the ctime: the bytes are hashed once more, and they are the pin.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&weights, std::fs::Permissions::from_mode(0o600)).unwrap();
    model
        .embed_query("herd of retries")
        .expect("a chmod is not a write");
    // A write with its mtime put back moves only the ctime too: the bytes tell.
    flip_byte_keeping_mtime(&weights, 1_000_000);
    // Other words each time: a query embedded before may be answered from the cache.
    for query in ["thundering herd", "retry with jitter"] {
        match model.embed_query(query) {
            Err(brain::Error::Model(ModelError::ChangedInUse { file, .. })) => {
                assert!(file.ends_with("model.safetensors"))
            }
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("embedded with weights written to after they were verified"),
        }
    }
    let err = model.embed_documents(&["a passage"]).unwrap_err();
    assert!(err.to_string().contains("brain model verify"), "{err}");
}

/// Issue #16: a load records what it verified and the next one trusts the record, but a
/// file changed after the record (same size, mtime put back) is hashed again and refused.
#[test]
fn verified_once_yet_a_later_change_is_still_caught() {
    let b = Brain::new();
    b.import_model();
    let dir = b.models_dir().join(MODEL);
    b.ok(&["model", "embed", "--model", MODEL, "hello"]);
    let record = std::fs::read_to_string(dir.join(".verified.json")).expect("a record");
    assert!(
        record.contains("model.safetensors") && record.contains("ctime_ns"),
        "{record}"
    );
    b.ok(&["model", "embed", "--model", MODEL, "hello"]);

    let weights = dir.join("model.safetensors");
    flip_byte_keeping_mtime(&weights, 40_000_000);
    let out = b.run(&["model", "embed", "--model", MODEL, "hello"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("model.safetensors"));
}

#[test]
fn importing_a_folder_with_a_wrong_file_installs_nothing() {
    let b = Brain::new();
    let src = tempfile::tempdir().unwrap();
    copy_dir(&test_model_dir(), src.path());
    flip_byte(&src.path().join("tokenizer.json"), 100);

    let out = b.run(&["model", "import", MODEL, src.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tokenizer.json"));
    assert!(!b.models_dir().join(MODEL).exists(), "nothing installed");
    let leftovers = std::fs::read_dir(b.models_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 0, "no staging folder left behind");

    std::fs::remove_file(src.path().join("config.json")).unwrap();
    let out = b.run(&["model", "import", MODEL, src.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

/// The folder imported from is not the brain folder (clap once read the positional DIR as
/// the global `--dir`: a data dir under it was refused as "inside the brain folder").
#[test]
fn the_folder_imported_from_is_not_taken_for_the_brain_folder() {
    let b = Brain::new();
    let src = tempfile::tempdir().unwrap();
    copy_dir(&test_model_dir(), src.path());
    let out = b
        .command()
        .env("BRAIN_DATA_DIR", src.path().join("data"))
        .args(["model", "import", MODEL])
        .arg(src.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    assert!(src.path().join("data/models").join(MODEL).is_dir());
}

/// A model installed while the brain embeds with another says how to switch: the search
/// would still say "run 'brain model fetch'", which fetches the other one.
#[test]
fn importing_a_model_the_brain_does_not_embed_with_says_how_to_use_it() {
    let b = Brain::new();
    let src = tempfile::tempdir().unwrap();
    copy_dir(&test_model_dir(), src.path());
    let out = b
        .command()
        .env("BRAIN_MODEL", "nomic-embed-text-v1.5")
        .args(["model", "import", MODEL])
        .arg(src.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!("note: this brain embeds with nomic-embed-text-v1.5, not {MODEL}: to use {MODEL}, set BRAIN_MODEL={MODEL} (or model = \"{MODEL}\" in the config file), then run 'brain index'\n")
    );
    // A folder that is not there is said so, not "not a folder".
    let none = b.run(&["model", "import", MODEL, "/nonexistent/model"]);
    assert_eq!(none.status.code(), Some(2), "{}", describe(&none));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains(
            "/nonexistent/model does not exist: give the folder holding the model's files"
        ),
        "{}",
        describe(&none)
    );
    // The model selected: nothing to say.
    let again = b.run(&["model", "import", MODEL, src.path().to_str().unwrap()]);
    assert!(again.status.success(), "{}", describe(&again));
    assert!(again.stderr.is_empty(), "{}", describe(&again));
}

/// An import killed mid-copy leaves its staging folder (up to a model's size) and a fetch
/// cut short its partial one: the next import clears both.
#[test]
fn an_import_clears_what_killed_installs_left() {
    let b = Brain::new();
    let models = b.models_dir();
    let abandoned = models.join(format!(".{MODEL}.import-4194000"));
    std::fs::create_dir_all(&abandoned).unwrap();
    std::fs::write(abandoned.join("model.safetensors"), "half").unwrap();
    let partial = models.join(format!(".{MODEL}.partial"));
    std::fs::create_dir_all(&partial).unwrap();
    b.import_model();
    assert!(!abandoned.exists(), "the dead import's folder is left");
    assert!(!partial.exists(), "the cut fetch's folder is left");
    let list = b.ok(&["model", "list"]).stdout();
    assert!(!list.contains("partial"), "{list}");
    // A model name it does not know is said where a person looks, with the closest one.
    let out = b
        .command()
        .env("BRAIN_MODEL", "minilm")
        .args(["model", "list"])
        .output()
        .unwrap();
    let r = crate::harness::Run(out);
    assert_eq!(r.code(), 0);
    assert!(
        r.stderr()
            .starts_with("warning: unknown model \"minilm\" (did you mean all-minilm-l6-v2?)"),
        "{}",
        r.stderr()
    );
    // A name typed as an argument is the argument's fault, not the setting's.
    for args in [
        &["model", "fetch", "minilm"][..],
        &["model", "verify", "minilm"],
        &["model", "embed", "--model", "minilm", "x"],
    ] {
        let r = b.run(args);
        assert_eq!(r.code(), 2, "{args:?}");
        assert_eq!(
            r.stderr().trim(),
            "error: unknown model \"minilm\" (did you mean all-minilm-l6-v2?): give one of 'brain model list'",
            "{args:?}"
        );
    }
}

#[test]
fn not_installed_is_a_distinct_error_that_search_can_fall_back_on() {
    let b = Brain::new();
    let config = b.config();
    assert!(!embed::is_installed(&config));
    match embed::load(&config) {
        Err(brain::Error::Model(ModelError::NotInstalled(name))) => assert_eq!(name, MODEL),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("loaded a model that is not installed"),
    }
    let out = b.run(&["model", "embed", "--model", MODEL, "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("brain model fetch"));
    let out = b.run(&["model", "embed", "--model", "no-such-model", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn odd_input_never_panics_and_always_gives_a_unit_vector() {
    let b = Brain::new();
    b.import_model();
    let model = embed::load(&b.config()).unwrap();
    let huge = "word ".repeat(20_000) + &"x".repeat(100_000);
    let texts = [
        "",
        " ",
        "\0\0\0",
        "🚀🚀🚀🔥",
        "\u{202e}rtl\u{200b}zero-width",
        huge.as_str(),
        "a\u{FFFD}b",
        "日本語のテキスト",
    ];
    let vs = model.embed_documents(&texts).unwrap();
    assert_eq!(vs.len(), texts.len());
    for (t, v) in texts.iter().zip(&vs) {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-4 && v.iter().all(|x| x.is_finite()),
            "{:?}: norm {norm}",
            &t[..t.len().min(20)]
        );
    }
    assert!(model.embed_documents(&[]).unwrap().is_empty());
}

#[test]
fn matryoshka_dims_are_refused_for_a_model_not_trained_for_them() {
    let b = Brain::new();
    b.import_model();
    let err = embed::load_with(
        &b.config(),
        MODEL,
        &LoadOptions {
            dims: Some(128),
            dims_from: brain::embed::DimsFrom::Config,
        },
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("model_dims = 128"), "{err}");
    assert_eq!(err.exit_code(), 2);
    // Asked on the command line, the flag is named, not the config.
    let r = b.run(&["model", "embed", "--model", MODEL, "--dims", "128", "hi"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("--dims 128: ") && !r.stderr().contains("model_dims"),
        "{}",
        r.stderr()
    );
}

/// Embedding works with no network at all: the process runs in a fresh network namespace
/// (`unshare -n`, root or unprivileged user namespaces needed), so any connection attempt
/// would fail. Network namespaces are Linux's; the macOS job leaves this to the Linux one.
#[cfg(target_os = "linux")]
#[test]
fn embeds_with_the_network_unreachable() {
    let b = Brain::new();
    b.import_model();
    let probe = std::process::Command::new("unshare")
        .args(["-rn", "true"])
        .output();
    let flag = match probe {
        Ok(o) if o.status.success() => "-rn",
        _ => "-n",
    };
    let cmd = b.command();
    let program = cmd.get_program().to_owned();
    let out = std::process::Command::new("unshare")
        .arg(flag)
        .arg(program)
        .args(["model", "embed", "--model", MODEL, "offline", "please"])
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env("BRAIN_HUB_URL", "http://192.0.2.1:9") // unroutable even with a network
        .output()
        .expect("unshare must be installed (util-linux) to run this test");
    assert!(
        out.status.success(),
        "embedding inside a network namespace failed (needs root or user namespaces):\n{}",
        describe(&out)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("dims:   384"));
}

/// Issue #15: where the model runs on a GPU (Metal on a Mac, CUDA in a CUDA build), its
/// vectors match the CPU's within a tolerance. Skipped, saying why, where it runs on the CPU
/// (this Linux machine, and hosted macOS runners that expose no GPU).
#[test]
fn gpu_vectors_match_the_cpus_where_a_gpu_exists() {
    let b = Brain::new().model();
    let texts = [
        "How do I undo the last commit?",
        "Retries need jitter, or they become a thundering herd: pick the sleep uniformly.",
        "x",
    ];
    for (i, text) in texts.iter().enumerate() {
        let out = b
            .command()
            .env_remove("BRAIN_DEVICE")
            .args(["model", "embed", "--json", text])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        let gpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if gpu["device"] == "cpu" {
            assert_eq!(i, 0, "the device changed between calls");
            eprintln!("skipped: the model runs on the CPU here (no GPU): nothing to compare");
            return;
        }
        let out = b
            .command()
            .env("BRAIN_DEVICE", "cpu")
            .args(["model", "embed", "--json", text])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        let cpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(cpu["device"], "cpu");
        let v = |j: &serde_json::Value| -> Vec<f32> {
            j["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        };
        let diff = max_diff(&v(&gpu), &v(&cpu));
        assert!(diff < 2e-3, "{}: {text:?} differs by {diff}", gpu["device"]);
    }
}

/// Flips a byte of `path` and puts its mtime back, as a writer hiding the change would:
/// only the ctime then says that it changed.
fn flip_byte_keeping_mtime(path: &std::path::Path, at: u64) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    flip_byte(path, at);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}
