//! `brain model list|fetch|import|verify|embed`.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use brain::embed::{self, LoadOptions};
use brain::model::{self, fetch::Progress, InstallReport};
use brain::Config;

use super::args::ModelCommand;
use super::print;

/// Runs `brain model ...`.
pub fn run(config: Config, cmd: ModelCommand) -> Result<ExitCode> {
    match cmd {
        ModelCommand::List { json } => list(&config, json),
        ModelCommand::Fetch { name, json } => {
            known(name.as_deref())?;
            let name = name.unwrap_or_else(|| config.model.clone());
            let hub = model::fetch::hub_url();
            // A setting that cannot be a hub is the setting's fault (exit 2), said before
            // any connection is tried.
            if !(hub.starts_with("https://") || hub.starts_with("http://"))
                || hub.contains(char::is_whitespace)
            {
                return Err(brain::Error::Config(format!(
                    "BRAIN_HUB_URL {hub:?} is not an http(s) URL: give the hub's address (https://huggingface.co, or a mirror), or unset it"
                ))
                .into());
            }
            let mut bar = FetchBar::new();
            let report = config.models().fetch(&name, &hub, &mut |p| bar.update(p));
            bar.finish();
            let done = installed(&report.map_err(brain::Error::from)?, json, "fetched")?;
            not_selected(&config, &name);
            Ok(done)
        }
        ModelCommand::Import { name, from, json } => {
            known(Some(&name))?;
            let report = config
                .models()
                .import(&name, &from)
                .map_err(brain::Error::from)?;
            let done = installed(&report, json, "imported")?;
            not_selected(&config, &name);
            Ok(done)
        }
        ModelCommand::Verify { name, json } => {
            let typed = name.is_some();
            verify(
                &config,
                &name.unwrap_or_else(|| config.model.clone()),
                typed,
                json,
            )
        }
        ModelCommand::Embed {
            text,
            query,
            dims,
            model: name,
            json,
        } => {
            let text = text.join(" ");
            if text.trim().is_empty() {
                return Err(brain::Error::InvalidInput(
                    "the text is empty: give the words to embed".into(),
                )
                .into());
            }
            known(name.as_deref())?;
            let name = name.unwrap_or_else(|| config.model.clone());
            let started = Instant::now();
            let embedder = embed::load_with(
                &config,
                &name,
                &LoadOptions {
                    dims,
                    dims_from: embed::DimsFrom::Flag,
                },
            )?;
            let loaded = started.elapsed();
            let started = Instant::now();
            let v = if query {
                embedder.embed_query(&text)?
            } else {
                embedder.embed_documents(&[&text])?.remove(0)
            };
            let took = started.elapsed();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            let mut out = io::stdout().lock();
            if json {
                let value = serde_json::json!({
                    "model": embedder.name(), "device": embedder.device(), "dims": v.len(),
                    "norm": norm, "as": if query { "query" } else { "document" }, "vector": v,
                });
                writeln!(out, "{value}")?;
            } else {
                let first: Vec<String> = v.iter().take(8).map(|x| format!("{x:+.5}")).collect();
                writeln!(
                    out,
                    "model:  {} on {} ({})",
                    embedder.name(),
                    embedder.device(),
                    if query { "query" } else { "document" }
                )?;
                writeln!(out, "dims:   {}", v.len())?;
                writeln!(out, "norm:   {norm:.6}")?;
                writeln!(out, "first:  [{}, ...]", first.join(", "))?;
                writeln!(
                    out,
                    "time:   load {} ms (verify included), embed {} ms",
                    loaded.as_millis(),
                    took.as_millis()
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Says on stderr when the model just installed is not the one the brain embeds with: a
/// search would still say "semantic search off: run 'brain model fetch'", which fetches
/// the other one (hundreds of megabytes, and offline it cannot).
fn not_selected(config: &Config, name: &str) {
    if name != config.model {
        eprintln!(
            "note: this brain embeds with {}, not {name}: to use {name}, set BRAIN_MODEL={name} (or model = \"{name}\" in the config file), then run 'brain index'",
            config.model
        );
    }
}

fn list(config: &Config, json: bool) -> Result<ExitCode> {
    // The list is where a person looks when a search says the model is off: a name it does
    // not hold is said, with the closest one (the table alone marked no row, in silence).
    if !config.model.starts_with(brain::model::STAND_IN_PREFIX) {
        if let Err(e) = brain::model::manifest(&config.model) {
            eprintln!("warning: {e}");
        }
    }
    let device = embed::expected_device();
    let rows = config
        .models()
        .list(&config.model, (&device.label, device.note.as_deref()), true);
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "  {:<24} {:<10} {:<9} {:>9} {:>5}  device",
        "model", "installed", "verified", "size", "dims"
    )?;
    for r in &rows {
        let verified = match r.verified {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let installed = if r.installed {
            "yes"
        } else if r.damaged {
            "damaged"
        } else if r.partial_fetch {
            "partial"
        } else {
            "no"
        };
        writeln!(
            out,
            "{} {:<24} {:<10} {:<9} {:>9} {:>5}  {}",
            if r.selected { "*" } else { " " },
            r.name,
            installed,
            verified,
            print::bytes(r.size),
            r.dims,
            r.device
        )?;
    }
    writeln!(
        out,
        "\n* = the configured model (BRAIN_MODEL or config); models live in {}",
        config.models_dir().display()
    )?;
    if let Some(note) = &device.note {
        writeln!(out, "device: {}: {note}", device.label)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `Ok` unless `typed`, a model name given as an argument, names no model brain knows:
/// then the error is about the argument, not the setting ("set BRAIN_MODEL" would send the
/// reader to a setting that is fine). Stand-in names are left to the command, which says
/// whether it takes one.
fn known(typed: Option<&str>) -> Result<(), brain::Error> {
    match typed {
        Some(name)
            if !name.starts_with(model::STAND_IN_PREFIX) && model::manifest(name).is_err() =>
        {
            Err(model::ModelError::UnknownArgument(name.to_string()).into())
        }
        _ => Ok(()),
    }
}

fn verify(config: &Config, name: &str, typed: bool, json: bool) -> Result<ExitCode> {
    let (report, err) = config.models().verify(name);
    let err = match err {
        Some(model::ModelError::Unknown(n)) if typed => Some(model::ModelError::UnknownArgument(n)),
        other => other,
    };
    let mut out = io::stdout().lock();
    if json {
        let value = serde_json::json!({ "report": report, "ok": err.is_none(), "error": err.as_ref().map(|e| e.to_string()) });
        writeln!(out, "{value}")?;
    } else {
        for f in &report.files {
            writeln!(
                out,
                "{:<10} {}{}",
                f.state,
                f.path,
                if f.required { "" } else { " (optional)" }
            )?;
        }
        if err.is_none() {
            writeln!(out, "{name}: every file matches audit/{name}.toml")?;
        }
    }
    out.flush()?;
    match err {
        Some(e) => Err(brain::Error::from(e).into()),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn installed(r: &InstallReport, json: bool, verb: &str) -> Result<ExitCode> {
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
    } else if r.already_installed {
        writeln!(
            out,
            "{} is already installed and verified in {}",
            r.model,
            r.dir.display()
        )?;
    } else {
        writeln!(
            out,
            "{verb} {} ({} files, {} verified) into {}",
            r.model,
            r.files.len(),
            print::bytes(r.bytes),
            r.dir.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A byte bar per file with rate and ETA on stderr (indicatif draws only to a terminal);
/// each file that completes leaves one "verified" line.
struct FetchBar {
    bar: indicatif::ProgressBar,
}

impl FetchBar {
    fn new() -> FetchBar {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(0),
            indicatif::ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:24} [{bar:24}] {bytes}/{total_bytes}  {bytes_per_sec}  eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        FetchBar { bar }
    }

    fn update(&mut self, p: &Progress) {
        match p {
            Progress::Start { file, done, total } => {
                self.bar.reset();
                self.bar.set_message(file.clone());
                self.bar.set_length(*total);
                // A resumed file: the bytes already there are not part of the rate.
                self.bar.set_position(*done);
                self.bar.reset_eta();
            }
            Progress::Advance { done, total, .. } => {
                self.bar.set_length(*total);
                self.bar.set_position(*done);
            }
            Progress::Verified { file } => {
                self.bar.println(format!("{file:<24} verified"));
            }
            // Said with or without a terminal: the install goes on without the file.
            Progress::Skipped { file, reason } => self.bar.suspend(|| {
                eprintln!("warning: {file}: optional, not installed: {reason}");
            }),
        }
    }

    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}
