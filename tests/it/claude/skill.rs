//! The skill must match the CLI exactly: every `brain ...` command line in SKILL.md, in code
//! blocks and in inline code, runs against a copy of examples/brain without a usage error,
//! and the examples in code blocks succeed.

use crate::harness::{repo, Brain};

/// A command line found in the skill.
#[derive(Debug)]
struct Found {
    line: usize,
    argv: Vec<String>,
    in_block: bool,
}

/// Command lines that must not really run in a test (network, or serving forever): they
/// are checked with `--help`, which clap answers only for a known subcommand.
const HELP_ONLY: &[&[&str]] = &[&["model", "fetch"], &["serve"], &["mcp"]];

/// Splits a shell command line into words (quotes, no expansion); `#` starts a comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    words.extend(word);
    words
}

/// Every `brain ...` command line: lines of shell code blocks, and inline code spans.
fn command_lines(markdown: &str) -> Vec<Found> {
    let mut found = Vec::new();
    let mut fence: Option<String> = None;
    for (i, text) in markdown.lines().enumerate() {
        let trimmed = text.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim().to_string()),
            };
            continue;
        }
        match &fence {
            Some(lang) if ["", "bash", "sh", "shell", "console"].contains(&lang.as_str()) => {
                let cmd = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
                if cmd.starts_with("brain ") {
                    found.push(Found {
                        line: i + 1,
                        argv: shell_words(cmd),
                        in_block: true,
                    });
                }
            }
            Some(_) => {}
            None => {
                for (j, span) in text.split('`').enumerate() {
                    if j % 2 == 1 && span.starts_with("brain ") {
                        found.push(Found {
                            line: i + 1,
                            argv: shell_words(span),
                            in_block: false,
                        });
                    }
                }
            }
        }
    }
    found
}

fn is_usage_error(code: i32, stderr: &str) -> bool {
    code == 2
        && [
            "Usage:",
            "unexpected argument",
            "unrecognized subcommand",
            "invalid value",
            "required arguments",
        ]
        .iter()
        .any(|s| stderr.contains(s))
}

#[test]
fn shell_words_split_like_a_shell() {
    assert_eq!(
        shell_words(r#"brain search "a b" 'c' d  # note"#),
        ["brain", "search", "a b", "c", "d"]
    );
    assert_eq!(
        shell_words("brain search wal#1"),
        ["brain", "search", "wal#1"]
    );
}

/// The messages the skill tells the assistant to watch for are ones brain prints: the skill
/// once quoted a notice ("are not embedded ... yet") that no code said.
#[test]
fn the_notices_the_skill_quotes_are_printed_by_brain() {
    let skill = std::fs::read_to_string(repo().join("skill/SKILL.md")).unwrap();
    let source: String = crate::harness::walk(&repo().join("src"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    // As quoted, `...` standing for what the message fills in (`{}` in its format string).
    for quoted in [
        "semantic search off: run 'brain model fetch'",
        "still waiting for embeddings",
        "being embedded now",
        "semantic search off: ... not embedded with ... yet; run 'brain index'",
    ] {
        assert!(
            skill.contains(&format!("`{quoted}`")),
            "SKILL.md no longer quotes {quoted:?}"
        );
        let printed = quoted.replace("...", "{}");
        assert!(
            source.contains(&printed),
            "brain no longer prints {printed:?}"
        );
    }
}

#[test]
fn every_command_line_in_the_skill_parses_and_the_examples_run() {
    let skill = std::fs::read_to_string(repo().join("skill/SKILL.md")).unwrap();
    let found = command_lines(&skill);
    assert!(
        found.iter().filter(|f| f.in_block).count() >= 8,
        "too few examples: {found:?}"
    );
    for sub in ["search", "get", "similar", "status"] {
        assert!(
            found.iter().any(|f| f.argv[1] == sub),
            "no example of brain {sub}"
        );
    }
    let b = Brain::example();
    let mut checked = 0;
    for f in &found {
        let args: Vec<&str> = f.argv[1..].iter().map(String::as_str).collect();
        let help_only = HELP_ONLY.iter().any(|h| args.starts_with(h));
        let mut run_args = args.clone();
        if help_only {
            run_args.push("--help");
        }
        let r = b.run(&run_args);
        assert!(
            !is_usage_error(r.code(), &r.stderr()),
            "SKILL.md:{}: {:?} is a usage error:\n{}",
            f.line,
            f.argv,
            r.stderr()
        );
        if f.in_block || help_only {
            assert_eq!(
                r.code(),
                0,
                "SKILL.md:{}: {:?} failed:\n{}",
                f.line,
                f.argv,
                r.stderr()
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} command lines checked");
}

#[test]
fn the_skill_examples_find_what_they_promise() {
    let b = Brain::example();
    let j = b.ok(&["search", "busy_timeout", "--json"]).json();
    assert_eq!(j["results"][0]["path"], "lore/sqlite-busy-timeout.md");
    let out = b.ok(&["get", "lore/sqlite-busy-timeout.md:16:10"]).stdout();
    assert!(
        out.contains("busy_timeout"),
        "the skill reads line 16 for busy_timeout:\n{out}"
    );
}
