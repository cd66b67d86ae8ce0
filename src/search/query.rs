//! Turning what a person typed into an FTS5 MATCH expression. User text never reaches MATCH
//! as syntax: every word becomes a quoted string (FTS5 tokenises inside the quotes), and the
//! words are OR-ed so a long question still ranks the notes that share its rarest words.
//!
//! Supported: `"exact phrase"`, `-exclude` (also `-"a phrase"`), `prefix*`.

/// One searchable unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The text, as typed (quotes removed). May hold several tokens: it then matches as a phrase.
    pub text: String,
    /// `word*`: matches any token starting with the word's last token.
    pub prefix: bool,
}

/// A parsed query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Terms any of which may match (OR), best notes share the rarest.
    pub terms: Vec<Term>,
    /// Terms no result may contain.
    pub excludes: Vec<Term>,
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
        let mut chars = input.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
                continue;
            }
            let negate = c == '-';
            if negate {
                chars.next();
            }
            let (text, quoted) = if chars.peek() == Some(&'"') {
                chars.next();
                let phrase: String = chars.by_ref().take_while(|&c| c != '"').collect();
                (phrase, true)
            } else {
                let word: String =
                    std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())).collect();
                (word, false)
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
            let term = Term { text, prefix };
            let list = if negate {
                &mut q.excludes
            } else {
                &mut q.terms
            };
            if !list.contains(&term) {
                list.push(term);
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
        q.terms.truncate(MAX_TERMS);
        q.excludes.truncate(MAX_TERMS);
        q
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

    /// The lowercase tokens of the positive terms: what an exact-name check compares with.
    pub fn words(&self) -> Vec<String> {
        self.terms
            .iter()
            .flat_map(|t| {
                t.text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_lowercase)
            })
            .collect()
    }
}

impl Query {
    /// Query words that look like identifiers (`wal_checkpoint`, `tokio::select!`,
    /// `Idempotency-Key`, `NaiveDateTime`), lowercased: worth finding literally, since the
    /// tokenizer splits them into ordinary words.
    pub fn identifiers(&self) -> Vec<String> {
        self.terms
            .iter()
            .filter(|t| !t.prefix && !t.text.contains(char::is_whitespace))
            .map(|t| {
                t.text
                    .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                    .to_string()
            })
            .filter(|w| is_identifier(w))
            .map(|w| w.to_lowercase())
            .collect()
    }
}

/// Joined words (`a_b`, `a::b`, `a.b`, `a-b`) and inner capitals (`NaiveDateTime`).
fn is_identifier(word: &str) -> bool {
    let joined = word.contains(['_', ':', '.', '-', '/'])
        && word.chars().filter(|c| c.is_alphanumeric()).count() >= 2;
    let camel =
        word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
    joined || camel
}

impl Term {
    /// The term as an FTS5 string: quoted, inner quotes doubled, `*` outside the quotes.
    fn to_fts(&self) -> String {
        let quoted = format!("\"{}\"", self.text.replace('"', "\"\""));
        if self.prefix {
            format!("{quoted}*")
        } else {
            quoted
        }
    }
}

fn is_stopword(t: &Term) -> bool {
    !t.prefix
        && STOPWORDS
            .binary_search(&t.text.to_lowercase().as_str())
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Option<String> {
        Query::parse(s).to_match()
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
        assert_eq!(m("-foo"), None);
    }

    #[test]
    fn identifiers_are_recognised() {
        let q = Query::parse(
            "wal_checkpoint tokio::select! NaiveDateTime Idempotency-Key plain words \"a_b c\"",
        );
        assert_eq!(
            q.identifiers(),
            vec![
                "wal_checkpoint",
                "tokio::select",
                "naivedatetime",
                "idempotency-key"
            ]
        );
    }

    #[test]
    fn huge_query_is_capped() {
        let q: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        assert_eq!(Query::parse(&q).terms.len(), MAX_TERMS);
    }
}
