//! Turning what a person typed into an FTS5 MATCH expression. User text never reaches MATCH
//! as syntax: every word becomes a quoted string (FTS5 tokenises inside the quotes), and the
//! words are OR-ed so a long question still ranks the notes that share its rarest words.
//!
//! Supported: `"exact phrase"`, `-exclude` (also `-"a phrase"`), `prefix*`. A dash is a
//! flag the person remembers, not an exclusion, when it starts `--` (`--release`) or a
//! short cluster of at most [`FLAG_CLUSTER`] letters or digits (`-xzf`, `-la`, `-rn`):
//! `tar -xzf` searches for the notes about that flag.

/// The longest `-abcd` cluster read as a flag; `-legacy` excludes.
pub const FLAG_CLUSTER: usize = 4;

/// Sentence punctuation that may close a word (`conflicts),`), the apostrophe aside: it
/// also closes a possessive, which [`without_possessive`] reads.
const CLOSING: &[char] = &[')', ']', '}', '>', '"', '`', ',', ';', ':', '.', '!', '?'];

/// One searchable unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The text, as typed (quotes removed). May hold several tokens: it then matches as a phrase.
    pub text: String,
    /// `word*`: matches any token starting with the word's last token.
    pub prefix: bool,
    /// `"quoted"`: the person wants these words together, as written.
    pub quoted: bool,
    /// An exclusion that may be a long flag (`-version`): see [`Query::resolve_flags`].
    pub maybe_flag: bool,
    /// For a pair of characters cut from a CJK run typed without spaces (`代理` of
    /// `配置代理服务器`), the word as typed: see [`cjk_pairs`].
    pub part_of: Option<String>,
}

impl Term {
    /// Whether this term matches only as written, its words together: a quoted phrase of
    /// several words, or words typed joined by punctuation (`retry/jitter`, `os.path`),
    /// which FTS5 reads as one phrase. A flag (`--no-verify`) is a name, not words.
    pub fn is_phrase(&self) -> bool {
        match self.quoted {
            true => self.text.split_whitespace().count() > 1,
            false => !self.is_flag() && self.part_of.is_none() && tokens(self.core()).count() > 1,
        }
    }

    /// A command-line flag (`-xzf`, `--no-verify`).
    pub fn is_flag(&self) -> bool {
        !self.quoted && self.text.starts_with('-')
    }

    /// The text without the sentence punctuation around it, which matching ignores
    /// (`(conflicts),` is `conflicts`); inner punctuation stays (`node.js`, `c++`), and so
    /// does a flag's dash.
    pub fn core(&self) -> &str {
        const OPEN: &[char] = &['(', '[', '{', '<', '\'', '"', '`'];
        let close = |c: char| CLOSING.contains(&c) || c == '\'';
        match self.text.trim_start_matches(OPEN).trim_end_matches(close) {
            "" => &self.text,
            core => core,
        }
    }

    /// The term as `--explain` names it: its [`Term::core`], quoted when it was quoted and
    /// with its `*` when it is a prefix.
    pub fn label(&self) -> String {
        let core = self.core();
        match (self.quoted, self.prefix) {
            (true, _) => format!("\"{core}\""),
            (false, true) => format!("{core}*"),
            (false, false) => core.to_string(),
        }
    }
}

/// A parsed query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Terms any of which may match (OR), best notes share the rarest.
    pub terms: Vec<Term>,
    /// Terms no result may contain.
    pub excludes: Vec<Term>,
    /// True when words past [`MAX_TERMS`] were left out (of either list): the search says
    /// so, instead of silently searching for less than was typed.
    pub capped: bool,
    /// The last quote was never closed (`"retry jitter`): the rest was read as a phrase,
    /// and the search says so.
    pub unclosed_quote: bool,
    /// The words as typed, in order, stopwords and repeats kept: what an exact-name check
    /// compares with (`go get` names a note, though `get` is too common to search for).
    /// Empty for a query not made by [`Query::parse`]: its terms are then the words.
    pub typed: Vec<TypedWord>,
}

/// A word of the query as typed, for the exact-name check ([`Query::words`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedWord {
    /// The lowercase word.
    pub word: String,
    /// For a word of `-word`, which may be a flag or an exclusion: the exclusion's text.
    /// The word is part of the name only once [`Query::resolve_flags`] made it a flag
    /// (`java -version`).
    pub if_flag: Option<String>,
}

/// Words too common to rank by; dropped from the OR list unless nothing else is left.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
    "do", "does", "doing", "for", "from", "get", "had", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// At most this many terms are searched; the rest of a pasted essay adds nothing but time.
pub const MAX_TERMS: usize = 64;

impl Query {
    /// Parses `input`. Never fails: text without a single searchable character yields an
    /// empty query.
    pub fn parse(input: &str) -> Query {
        let mut q = Query::default();
        // Control characters are spaces: SQLite reads a MATCH string up to a NUL, so one
        // inside a quoted term left the quote open ("unterminated string", found by the
        // fuzzer), and no note is searched for them anyway.
        // Characters that show as nothing are taken out, as the index takes them out of
        // notes (`fts_text::visible`): a zero-width space pasted into a word stays one word.
        let input: String = crate::index::fts_text::visible(input)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut chars = input.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
                continue;
            }
            // The words as typed, for the exact-name check: a possessive taken off a term
            // below is still part of a title (`Bob's Burgers`).
            let mut as_typed = None;
            let (text, quoted, negate) = if c == '"' || (c == '-' && starts_phrase(&chars)) {
                let negate = c == '-';
                if negate {
                    chars.next();
                }
                chars.next();
                let mut phrase = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '"' {
                        closed = true;
                        break;
                    }
                    phrase.push(c);
                }
                // Only a quote that opened something: `retry "` is the word alone.
                q.unclosed_quote |= !closed && phrase.chars().any(char::is_alphanumeric);
                (phrase, true, negate)
            } else {
                let typed: String =
                    std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())).collect();
                let word = without_possessive(&typed);
                // A dash word copied with the punctuation its sentence put after it
                // (`$(ssh-agent -s)`, `comm -23.`, `'ls -la'`): the flag, or the word to
                // exclude, is the word without it.
                let word = match word.starts_with('-') {
                    true => {
                        let bare = word.trim_end_matches(|c| CLOSING.contains(&c) || c == '\'');
                        match bare.chars().any(char::is_alphanumeric) {
                            true => bare.to_string(),
                            false => word,
                        }
                    }
                    false => word,
                };
                as_typed = Some(typed);
                match word.strip_prefix('-') {
                    Some(rest) if !is_flag(&word) => (rest.to_string(), false, true),
                    _ => (word, false, false),
                }
            };
            let prefix = !quoted
                && text.ends_with('*')
                && text
                    .trim_end_matches('*')
                    .chars()
                    .any(char::is_alphanumeric);
            let text = if quoted {
                text
            } else {
                text.trim_end_matches('*').to_string()
            };
            if !text.chars().any(char::is_alphanumeric) {
                continue;
            }
            let maybe_flag = negate
                && !quoted
                && !prefix
                && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            if !negate || maybe_flag {
                let if_flag = negate.then(|| text.clone());
                let typed = match (&as_typed, negate) {
                    (Some(word), false) => word.as_str(),
                    _ => text.as_str(),
                };
                q.typed.extend(tokens(typed).map(|word| TypedWord {
                    word,
                    if_flag: if_flag.clone(),
                }));
            }
            let term = Term {
                text,
                prefix,
                quoted,
                maybe_flag,
                part_of: None,
            };
            let list = if negate {
                &mut q.excludes
            } else {
                &mut q.terms
            };
            let terms = match negate {
                true => vec![term],
                false => cjk_pairs(term),
            };
            for term in terms {
                if !list.contains(&term) {
                    list.push(term);
                }
            }
        }
        let content: Vec<Term> = q
            .terms
            .iter()
            .filter(|t| !is_stopword(t))
            .cloned()
            .collect();
        if !content.is_empty() {
            q.terms = content;
        }
        q.capped = q.terms.len() > MAX_TERMS || q.excludes.len() > MAX_TERMS;
        q.terms.truncate(MAX_TERMS);
        q.excludes.truncate(MAX_TERMS);
        q
    }

    /// Whether every word searched for is too common to rank by (`the a of`): kept, as
    /// nothing else was typed, but matching most notes alike.
    pub fn only_stopwords(&self) -> bool {
        !self.terms.is_empty() && self.terms.iter().all(is_stopword)
    }

    /// Decides what a long dash word (`java -version`, `sqlite -checkpoint`) means: a flag
    /// the person remembers when some note has it written as a flag (`used("-version")`
    /// is true), else the exclusion it reads as. Short clusters and `--` words were flags
    /// from the start.
    pub fn resolve_flags<E>(
        &mut self,
        mut used: impl FnMut(&str) -> Result<bool, E>,
    ) -> Result<(), E> {
        let mut kept = Vec::with_capacity(self.excludes.len());
        for t in std::mem::take(&mut self.excludes) {
            let flag = format!("-{}", t.text);
            if t.maybe_flag && used(&flag.to_lowercase())? {
                let term = Term {
                    text: flag,
                    prefix: false,
                    quoted: false,
                    maybe_flag: false,
                    part_of: None,
                };
                if self.terms.contains(&term) {
                    // Searched for already.
                } else if self.terms.len() < MAX_TERMS {
                    self.terms.push(term);
                } else {
                    self.capped = true;
                }
            } else {
                kept.push(t);
            }
        }
        self.excludes = kept;
        Ok(())
    }

    /// The MATCH expression of the excluded terms alone (`None` without exclusions): the
    /// notes no mode may return.
    pub fn excluded_match(&self) -> Option<String> {
        (!self.excludes.is_empty()).then(|| {
            self.excludes
                .iter()
                .map(Term::to_fts)
                .collect::<Vec<_>>()
                .join(" OR ")
        })
    }

    /// The MATCH expression, or `None` when no term can match anything.
    pub fn to_match(&self) -> Option<String> {
        if self.terms.is_empty() {
            return None;
        }
        let any = self
            .terms
            .iter()
            .map(Term::to_fts)
            .collect::<Vec<_>>()
            .join(" OR ");
        if self.excludes.is_empty() {
            return Some(any);
        }
        let none = self
            .excludes
            .iter()
            .map(Term::to_fts)
            .collect::<Vec<_>>()
            .join(" OR ");
        Some(format!("({any}) NOT ({none})"))
    }

    /// The tokens of `text` as separate words, read as a query of them typed apart
    /// (stopwords dropped, a CJK run in pairs): what a phrase, or words joined by
    /// punctuation (`retry/jitter`), match when their words may stand apart.
    pub fn words_apart(text: &str) -> Query {
        Query::parse(&Query::spaced(text))
    }

    /// `text`'s tokens with spaces between them: `retry/jitter` is `retry jitter`.
    pub fn spaced(text: &str) -> String {
        tokens(text).collect::<Vec<_>>().join(" ")
    }

    /// The lowercase words of the positive terms as typed, stopwords included (a CJK run
    /// cut into pairs counts once, whole): what an exact-name check compares with.
    pub fn words(&self) -> Vec<String> {
        if !self.typed.is_empty() {
            let flag = |f: &str| {
                self.terms
                    .iter()
                    .any(|t| t.text.strip_prefix('-') == Some(f))
            };
            return self
                .typed
                .iter()
                .filter(|t| t.if_flag.as_deref().is_none_or(flag))
                .map(|t| t.word.clone())
                .collect();
        }
        let mut whole: Option<&str> = None;
        self.terms
            .iter()
            .filter_map(|t| match &t.part_of {
                Some(w) if whole == Some(w.as_str()) => None,
                Some(w) => {
                    whole = Some(w);
                    Some(w.as_str())
                }
                None => Some(t.text.as_str()),
            })
            .flat_map(tokens)
            .collect()
    }

    /// The lowercase tokens of the positive terms as searched for (a CJK run's pairs):
    /// what a passage marks.
    pub fn searched_words(&self) -> Vec<String> {
        self.terms.iter().flat_map(|t| tokens(&t.text)).collect()
    }
}

impl Query {
    /// What the person typed that is worth finding literally, lowercased: identifiers
    /// (`wal_checkpoint`, `tokio::select`, `NaiveDateTime`, `os.path.join`,
    /// `Idempotency-Key`), paths (`~/.ssh/config`), flags (`-xzf`, `--no-verify`) and
    /// quoted phrases. The tokenizer splits all of them into ordinary words, so BM25 alone
    /// cannot tell `wal_checkpoint` from a note that says "wal" and "checkpoint" apart.
    /// Plain hyphenated English (`self-signed`, `copy-on-write`) is not among them: it is
    /// how many notes write ordinary words.
    pub fn literals(&self) -> Vec<String> {
        self.terms
            .iter()
            .filter(|t| !t.prefix)
            .filter_map(|t| {
                if t.quoted {
                    // One quoted word holding punctuation (`"@reboot"`, `"c++"`,
                    // `"self-signed"`) is wanted as written, as a phrase is.
                    let text = t.text.trim();
                    let punctuated = text.chars().any(|c| !c.is_alphanumeric())
                        && text.chars().any(char::is_alphanumeric);
                    return (text.split_whitespace().count() > 1
                        || is_identifier(text)
                        || punctuated)
                        .then(|| text.to_lowercase());
                }
                if t.is_flag() {
                    return Some(t.text.to_lowercase());
                }
                if is_sigil_name(t.core()) {
                    return Some(t.core().to_lowercase());
                }
                let word = t
                    .text
                    .trim_matches(|c: char| !c.is_alphanumeric() && !"_~/".contains(c));
                is_identifier(word).then(|| word.to_lowercase())
            })
            .collect()
    }

    /// Whether the query is nothing but literals ([`Query::literals`]): one or more
    /// identifiers, paths, flags or quoted phrases and no plain word (`end_of_line`,
    /// `--timer`, `"refusing to merge unrelated histories"`). The person typed a name, so
    /// a note that does not hold it is not what they asked for.
    pub fn only_literals(&self) -> bool {
        !self.terms.is_empty() && self.literals().len() == self.terms.len()
    }
}

/// Joined words (`a_b`, `a::b`, `a.b`, `a/b`), inner capitals (`NaiveDateTime`),
/// hyphenated names with a capital or a digit (`Idempotency-Key`, `x86-64`), and codes
/// where a letter runs into a digit (`64A010`, `sha256`, `ext4`, `k8s`); a number with
/// its unit or ordinal (`100ms`, `2nd`, `4k`) is not a code, nor is a size (`2x2`,
/// `1920x1080`): "how much a 2x2 transform shrinks shapes" gave the notes that mention a
/// 2x2 matrix in passing a literal's bonus over the note about determinants.
fn is_identifier(word: &str) -> bool {
    let alnum = word.chars().filter(|c| c.is_alphanumeric()).count();
    let joined = word.contains(['_', ':', '/']) && alnum >= 2;
    let dotted = word
        .split('.')
        .filter(|part| part.chars().any(char::is_alphanumeric))
        .count()
        >= 2
        && !word.chars().all(|c| c.is_ascii_digit() || c == '.');
    let camel =
        word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
    let hyphenated = word.contains('-')
        && alnum >= 2
        && word
            .split('-')
            .any(|part| part.chars().any(|c| c.is_uppercase() || c.is_ascii_digit()));
    let code = word
        .chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_alphabetic() && b.is_ascii_digit())
        && !is_size(word);
    joined || dotted || camel || hyphenated || code
}

/// `2x2`, `3x3x3`, `1920x1080`: numbers joined by `x`. Not `0x80`, a hex constant, which
/// is a name.
fn is_size(word: &str) -> bool {
    let mut parts = word.split(['x', 'X']);
    !word.starts_with('0')
        && parts.clone().count() >= 2
        && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// A name written with its sigil (`@reboot`, `$HOME`, `%s`): the sigil is what tells it
/// from the word, which the tokenizer cannot see (`reboot` is in every note that says
/// "reboots"), so it is found literally, sigil and all. Not `#`: `#rust` is a tag, which a
/// note's `tags` hold without it, so the notes tagged `rust` would have gone under one
/// whose URL ends `#rust`.
fn is_sigil_name(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some('@' | '$' | '%'))
        && chars
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || "_-.".contains(c))
}

/// `word` without an English possessive (`xclip's,` is `xclip,`): the apostrophe splits
/// `xclip's` into the phrase `xclip s`, which no note about xclip holds unless it says
/// "xclip's" too, so the word dropped out of the keyword search, with no notice.
fn without_possessive(word: &str) -> String {
    let body = word.trim_end_matches(CLOSING);
    let after = &word[body.len()..];
    ["'s", "\u{2019}s", "'S", "\u{2019}S"]
        .iter()
        .find_map(|mark| body.strip_suffix(mark))
        // `C#'s`, `C++'s` too.
        .filter(|stem| {
            stem.chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '#' || c == '+')
        })
        .map_or_else(|| word.to_string(), |stem| format!("{stem}{after}"))
}

/// `-xzf`, `-la`, `-O2`, `--release`, `--output=json`: a flag, not an exclusion.
fn is_flag(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        return long.starts_with(|c: char| c.is_alphanumeric());
    }
    word.strip_prefix('-').is_some_and(|short| {
        let name = short.split('=').next().unwrap_or("");
        !name.is_empty()
            && name.chars().count() <= FLAG_CLUSTER
            && name.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// Whether the `-` at the front of `chars` opens an excluded `-"phrase"`.
fn starts_phrase(chars: &std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    let mut ahead = chars.clone();
    ahead.next();
    ahead.next() == Some('"')
}

impl Term {
    /// The term as an FTS5 string: quoted, inner quotes doubled, `*` outside the quotes.
    pub(crate) fn to_fts(&self) -> String {
        // Marked as indexed: CJK characters one token each (a run of them is a phrase),
        // `C++` and `C#` a token of their own.
        let text = crate::index::fts_text::indexed(&self.text);
        let quoted = format!("\"{}\"", text.replace('"', "\"\""));
        if self.prefix {
            format!("{quoted}*")
        } else {
            quoted
        }
    }
}

/// The lowercase runs of letters and digits of `text`.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// `term`, or, for a run of three or more CJK characters typed without spaces or quotes
/// (a question: `怎么配置代理服务器`), the overlapping pairs of its characters, each a
/// phrase of two (`怎么`, `么配`, `配置`, ...), OR-ed like words. Searched whole, the run
/// would find only notes holding it verbatim; its pairs find the notes sharing most of it,
/// best first, with one holding it whole among the first (it holds every pair). The pairs
/// remember the run ([`Term::part_of`]), which the exact-title check reads.
fn cjk_pairs(term: Term) -> Vec<Term> {
    use crate::text::cjk::is_cjk;
    let letters: Vec<char> = term.text.chars().filter(|c| c.is_alphanumeric()).collect();
    if term.quoted || term.prefix || letters.len() < 3 || !letters.iter().all(|&c| is_cjk(c)) {
        return vec![term];
    }
    let mut pairs = Vec::new();
    for run in term.text.split(|c: char| !c.is_alphanumeric()) {
        let texts = match run.chars().count() {
            0 => continue,
            1 => vec![run.to_string()],
            _ => crate::text::cjk::pairs(run),
        };
        for text in texts {
            pairs.push(Term {
                text,
                prefix: false,
                quoted: false,
                maybe_flag: false,
                part_of: Some(term.text.clone()),
            });
        }
    }
    pairs
}

/// Whether `word` (lowercase) is too common to rank by.
pub(crate) fn is_stopword_word(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Whether `start` (lowercase) begins some word too common to rank by (`wha` of `what`): a
/// word half typed that is likely one of them.
pub(crate) fn starts_stopword(start: &str) -> bool {
    STOPWORDS.iter().any(|w| w.starts_with(start))
}

/// The full-text expression that matches one plain word (`None` when it has no token).
pub(crate) fn term_expr(word: &str) -> Option<String> {
    Query {
        terms: vec![Term {
            text: word.to_string(),
            prefix: false,
            quoted: false,
            maybe_flag: false,
            part_of: None,
        }],
        ..Default::default()
    }
    .to_match()
}

fn is_stopword(t: &Term) -> bool {
    !t.prefix
        && !t.quoted
        // `this,` is `this`: the punctuation around a word does not make it rarer.
        && STOPWORDS
            .binary_search(&t.core().to_lowercase().as_str())
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Option<String> {
        Query::parse(s).to_match()
    }

    #[test]
    fn words_joined_by_punctuation_are_a_phrase_and_a_flag_is_not() {
        let phrase = |q: &str| {
            Query::parse(q)
                .terms
                .iter()
                .map(Term::is_phrase)
                .collect::<Vec<_>>()
        };
        assert_eq!(phrase("retry/jitter os.path.join"), [true, true]);
        assert_eq!(phrase("\"retry jitter\" \"one\""), [true, false]);
        assert_eq!(
            phrase("--no-verify -xzf retry, (jitter)"),
            [false, false, false, false]
        );
        let apart: Vec<String> = Query::words_apart("Retry/jitter")
            .terms
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(apart, ["retry", "jitter"]);
    }

    #[test]
    fn stopwords_are_not_searched_for_but_are_part_of_a_name() {
        let q = Query::parse("how to cut a release");
        assert_eq!(q.terms.len(), 2);
        assert_eq!(q.words(), ["how", "to", "cut", "a", "release"]);
        assert_eq!(Query::parse("go get -\"old way\"").words(), ["go", "get"]);
        // A repeated word is part of the name too.
        assert_eq!(
            Query::parse("how to get to the office").words(),
            ["how", "to", "get", "to", "the", "office"]
        );
        // A `-word` is part of it once it is read as a flag, not as an exclusion.
        let mut q = Query::parse("java -version");
        assert_eq!(q.words(), ["java"]);
        q.resolve_flags(|_| Ok::<_, ()>(true)).unwrap();
        assert_eq!(q.words(), ["java", "version"]);
    }

    #[test]
    fn a_cjk_run_typed_without_spaces_is_searched_as_its_pairs() {
        let q = Query::parse("怎么配置代理服务器？ 代理 \"配置代理\" Rust的所有权");
        let texts: Vec<&str> = q.terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "怎么",
                "么配",
                "配置",
                "置代",
                "代理",
                "理服",
                "服务",
                "务器",
                "代理",
                "配置代理",
                "Rust的所有权"
            ]
        );
        // As typed for the exact-title check; as searched for the marks.
        assert_eq!(
            q.words(),
            ["怎么配置代理服务器", "代理", "配置代理", "rust的所有权"]
        );
        assert_eq!(q.searched_words()[..2], ["怎么", "么配"]);
        // An exclusion stays whole, and so does a run of two.
        let q = Query::parse("网络 -配置代理");
        assert_eq!(q.terms[0].text, "网络");
        assert_eq!(q.excludes[0].text, "配置代理");
    }

    #[test]
    fn labels_drop_the_punctuation_around_a_term_only() {
        let labels =
            |s: &str| -> Vec<String> { Query::parse(s).terms.iter().map(Term::label).collect() };
        assert_eq!(
            labels(r#"rebase; (conflicts), "abort"! node.js. c++ -xzf redis*"#),
            vec![
                "rebase",
                "conflicts",
                "\"abort\"",
                "node.js",
                "c++",
                "-xzf",
                "redis*"
            ]
        );
    }

    #[test]
    fn a_stopword_is_one_with_punctuation_around_it_too() {
        let terms = Query::parse("undo this, (and) why? rebase").terms;
        let texts: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["undo", "rebase"]);
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn words_are_quoted_and_ored_without_stopwords() {
        assert_eq!(
            m("how do i prevent silent failures from gitignore patterns").unwrap(),
            r#""prevent" OR "silent" OR "failures" OR "gitignore" OR "patterns""#
        );
    }

    #[test]
    fn only_stopwords_are_kept() {
        assert_eq!(m("how to").unwrap(), r#""how" OR "to""#);
    }

    #[test]
    fn phrases_excludes_prefixes() {
        assert_eq!(
            m(r#""feature flag" clean* -legacy"#).unwrap(),
            r#"("feature flag" OR "clean"*) NOT ("legacy")"#
        );
        assert_eq!(
            m(r#"flags -"old code""#).unwrap(),
            r#"("flags") NOT ("old code")"#
        );
    }

    #[test]
    fn operators_and_punctuation_are_not_syntax() {
        assert_eq!(m("NEAR( AND OR").unwrap(), r#""NEAR(""#);
        assert_eq!(m("AND OR").unwrap(), r#""AND" OR "OR""#);
        for junk in ["\"", "*", ":", "", "   ", "-", "()", "^"] {
            assert_eq!(m(junk), None, "{junk:?}");
        }
        assert_eq!(m(r#"a"b"#).unwrap(), r#""a""b""#);
    }

    #[test]
    fn unclosed_quote_takes_the_rest() {
        assert_eq!(m(r#"x "open phrase"#).unwrap(), r#""x" OR "open phrase""#);
    }

    #[test]
    fn only_excludes_match_nothing() {
        assert_eq!(m("-foobar"), None);
        assert_eq!(m("-foo").unwrap(), r#""-foo""#, "a short cluster is a flag");
    }

    #[test]
    fn long_dash_words_are_flags_only_where_notes_write_them_so() {
        let mut q = Query::parse("java -version -legacy");
        q.resolve_flags(|lit| Ok::<_, ()>(lit == "-version"))
            .unwrap();
        let terms: Vec<&str> = q.terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(terms, ["java", "-version"]);
        assert_eq!(q.excluded_match().unwrap(), r#""legacy""#);
        let mut q = Query::parse(r#"x -"a phrase" -prefix*"#);
        q.resolve_flags(|_| Ok::<_, ()>(true)).unwrap();
        assert_eq!(q.excludes.len(), 2, "phrases and prefixes are never flags");
    }

    #[test]
    fn literals_are_identifiers_paths_flags_and_phrases() {
        let q = Query::parse(
            "wal_checkpoint tokio::select! NaiveDateTime Idempotency-Key os.path.join \
             ~/.ssh/config -xzf --no-verify x86-64 \"refusing to merge\" self-signed plain 1.5 \
             64A010 sha256 100ms 2nd",
        );
        assert_eq!(
            q.literals(),
            vec![
                "wal_checkpoint",
                "tokio::select",
                "naivedatetime",
                "idempotency-key",
                "os.path.join",
                "~/.ssh/config",
                "-xzf",
                "--no-verify",
                "x86-64",
                "refusing to merge",
                "64a010",
                "sha256",
            ]
        );
    }

    #[test]
    fn sizes_are_not_codes_and_sigil_names_keep_their_sigil() {
        let q =
            Query::parse("a 2x2 matrix on a 1920x1080 screen with 3x3x3 cubes on x86, int 0x80");
        assert_eq!(q.literals(), vec!["x86", "0x80"]);
        let q = Query::parse("@reboot $HOME %s #rust (@daily), \"@yearly\" \"c++\" \"plain\"");
        assert_eq!(
            q.literals(),
            vec!["@reboot", "$home", "%s", "@daily", "@yearly", "c++"]
        );
        assert!(Query::parse("@reboot").only_literals());
        assert!(!Query::parse("@ reboot").only_literals());
    }

    #[test]
    fn a_possessive_is_searched_as_its_word() {
        let q = Query::parse("xclip's clipboard, the kernel\u{2019}s swappiness git's. it's C#'s");
        let terms: Vec<&str> = q.terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            terms,
            ["xclip", "clipboard,", "kernel", "swappiness", "git.", "C#"]
        );
        assert!(q.terms.iter().all(|t| !t.is_phrase()), "{q:?}");
        // As typed for the exact-name check: `Bob's Burgers` is a title.
        assert_eq!(
            Query::parse("Bob's Burgers").words(),
            ["bob", "s", "burgers"]
        );
        // Quoted, it is what was typed.
        assert_eq!(Query::parse("\"xclip's\"").terms[0].text, "xclip's");
    }

    #[test]
    fn a_query_of_only_names_is_told_from_one_with_words() {
        for only in [
            "end_of_line",
            "--timer",
            "user.id",
            "the wal_checkpoint",
            "\"refusing to merge unrelated histories\"",
            "-xzf --no-verify",
        ] {
            assert!(Query::parse(only).only_literals(), "{only}");
        }
        for mixed in [
            "tar -xzf",
            "wal_checkpoint busy",
            "self-signed",
            "retry jitter",
            "wal_check*",
            "",
        ] {
            assert!(!Query::parse(mixed).only_literals(), "{mixed}");
        }
    }

    #[test]
    fn short_dash_clusters_and_double_dashes_are_flags_not_exclusions() {
        for (query, flag) in [
            ("tar -xzf", "-xzf"),
            ("ls -la", "-la"),
            ("grep -rn pattern", "-rn"),
            ("cargo test --release", "--release"),
            ("gcc -O2", "-O2"),
            ("git commit --no-verify", "--no-verify"),
            ("curl -o=out", "-o=out"),
            ("eval $(ssh-agent -s)", "-s"),
            ("comm -23.", "-23"),
            ("ls -l, then", "-l"),
            ("cargo build --release.", "--release"),
            ("sh -c 'ls -la'", "-la"),
        ] {
            let q = Query::parse(query);
            assert!(q.excludes.is_empty(), "{query}: {q:?}");
            assert!(
                q.terms.iter().any(|t| t.text == flag && t.is_flag()),
                "{query}: {q:?}"
            );
        }
        let q = Query::parse("flags -legacy -\"old code\"");
        assert_eq!(
            q.excludes
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>(),
            ["legacy", "old code"]
        );
        assert_eq!(m("tar -xzf").unwrap(), r#""tar" OR "-xzf""#);
    }

    #[test]
    fn a_query_of_common_words_alone_is_told_apart() {
        assert!(Query::parse("the a of").only_stopwords());
        assert!(Query::parse("What is it?").only_stopwords());
        for not in ["the wal", "\"the\"", "the*", "  "] {
            assert!(!Query::parse(not).only_stopwords(), "{not}");
        }
    }

    #[test]
    fn an_unclosed_quote_is_noticed() {
        for (input, open) in [
            ("\"retry jitter", true),
            ("x -\"retry", true),
            ("\"retry jitter\" x", false),
            ("\"\"", false),
            ("retry \"", false),
            ("retry -\"", false),
            ("retry", false),
        ] {
            assert_eq!(Query::parse(input).unclosed_quote, open, "{input}");
        }
        let q = Query::parse("\"retry jitter");
        assert_eq!(q.terms[0].text, "retry jitter");
        assert!(q.terms[0].quoted);
    }

    #[test]
    fn huge_query_is_capped_and_says_so() {
        let q: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        let q = Query::parse(&q);
        assert_eq!(q.terms.len(), MAX_TERMS);
        assert!(q.capped);
        let words = |n: usize| (0..n).map(|i| format!("w{i} ")).collect::<String>();
        assert!(!Query::parse(&words(MAX_TERMS)).capped);
        assert!(Query::parse(&words(MAX_TERMS + 1)).capped);
        // Repeated words and stopwords are not words left out.
        let repeated = format!("{} the a of {}", words(MAX_TERMS), words(MAX_TERMS));
        assert!(!Query::parse(&repeated).capped);
        let excluded: String = (0..=MAX_TERMS).map(|i| format!("-x{i} ")).collect();
        assert!(Query::parse(&format!("w {excluded}")).capped);
    }
}
