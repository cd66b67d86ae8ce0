//! The text the full-text index holds, and the text its readers get back: what is indexed
//! (and searched for) carries marks that steer FTS5's tokenizer, which every reader takes
//! out again, so snippets, bodies and line numbers are the note's own text.
//!
//! Two kinds of mark, each with its module: CJK characters set apart one token each
//! ([`crate::text::cjk`]), and names spelled with symbols kept whole (`C++`, `C#`:
//! [`crate::text::symbols`]).

use std::borrow::Cow;

use crate::text::{cjk, symbols};

pub use crate::text::visible;

/// `text` as the index holds it ([`visible`], then marked); unchanged (borrowed) when
/// nothing applies.
pub fn indexed(text: &str) -> Cow<'_, str> {
    match visible(text) {
        Cow::Borrowed(t) => marked(t),
        Cow::Owned(t) => Cow::Owned(marked(&t).into_owned()),
    }
}

/// `text` with the tokenizer's marks put in.
fn marked(text: &str) -> Cow<'_, str> {
    match symbols::marked(text) {
        Cow::Borrowed(t) => cjk::spaced(t),
        Cow::Owned(t) => Cow::Owned(cjk::spaced(&t).into_owned()),
    }
}

/// `text` read from the index, without the marks [`indexed`] put in (its invisible
/// characters are not put back: they showed as nothing).
pub fn shown(text: &str) -> Cow<'_, str> {
    match cjk::unspaced(text) {
        Cow::Borrowed(t) => symbols::unmarked(t),
        Cow::Owned(t) => Cow::Owned(symbols::unmarked(&t).into_owned()),
    }
}

/// [`shown`], for a `String` read from the index.
pub fn show(text: String) -> String {
    match shown(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(t) => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_indexed_reads_back_as_written() {
        for text in ["C++17 在 中文 里, C#", "g++ -O2\n配置代理"] {
            let held = indexed(text);
            assert_ne!(held, text, "{text}");
            assert_eq!(shown(&held), text);
            assert_eq!(show(held.into_owned()), text);
        }
        assert!(matches!(indexed("plain"), Cow::Borrowed(_)));
        assert_eq!(
            indexed("deploy\u{200B}ment soft\u{AD}hyphen"),
            "deployment softhyphen"
        );
        assert_eq!(shown(&indexed("a\u{FEFF}b C++")), "ab C++");
        assert!(matches!(shown("plain"), Cow::Borrowed(_)));
    }
}
