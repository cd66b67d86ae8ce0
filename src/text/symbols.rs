//! Names spelled with symbols, as the full-text index reads them: `C++`, `C#`, `F#`, `g++`.
//!
//! FTS5's `unicode61` tokenizer drops `+` and `#`, so `C++` and `C#` were the token `c`:
//! a search for `C++` ranked a note on C first, and notes on C# and `bash -c` beside it. In
//! what is indexed and what is searched for, the symbols after one letter are therefore
//! written as characters the tokenizer keeps inside a token (two private-use code points,
//! category Co, a token character to `unicode61`), so `C++` is a token of its own, unlike
//! `c` and `c#`. A version that follows (`C++17`, `C#10`) is set apart by the CJK module's
//! zero-width mark, so `C++` finds it too. Readers of the indexed text put the symbols back
//! ([`unmarked`]). Only a single letter takes this: `Notepad++` stays the word `notepad`,
//! which is what a person searching for it types.

use std::borrow::Cow;

use super::cjk::MARK;

/// What stands for `+` after a letter in the index: a code point of Supplementary
/// Private Use Area-B, which no font or input method hands out (icon fonts use the BMP's
/// area and Area-A).
pub const PLUS: char = '\u{10FF2B}';
/// What stands for `#` after a letter in the index.
pub const SHARP: char = '\u{10FF23}';

/// `text` with each `X++` and `X#` (one ASCII letter, not inside a longer word, followed
/// by neither a letter nor more of the symbol) written with [`PLUS`] and [`SHARP`];
/// unchanged (borrowed) when it holds none.
pub fn marked(text: &str) -> Cow<'_, str> {
    // Most text holds neither: two fast searches of it instead of a look at every letter.
    if !text.contains('#') && !text.contains("++") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    // A letter or digit of a word (a CJK character is a word of its own, `text::cjk`).
    let word = |c: char| (c.is_alphanumeric() && !super::cjk::is_cjk(c)) || c == '_';
    // The symbols' positions, each with how many bytes of symbol follow the letter.
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (at, &b) in bytes.iter().enumerate() {
        if !b.is_ascii_alphabetic() || text[..at].chars().next_back().is_some_and(word) {
            continue;
        }
        let rest = &text[at + 1..];
        let symbol = if rest.starts_with("++") {
            2
        } else if rest.starts_with('#') {
            1
        } else {
            continue;
        };
        match rest[symbol..].chars().next() {
            Some(next) if next == '+' || next == '#' || (word(next) && !next.is_ascii_digit()) => {}
            _ => found.push((at + 1, symbol)),
        }
    }
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + found.len() * 8);
    let mut from = 0;
    for (at, len) in found {
        out.push_str(&text[from..at]);
        let stand_in = if len == 2 { PLUS } else { SHARP };
        (0..len).for_each(|_| out.push(stand_in));
        if bytes.get(at + len).is_some_and(u8::is_ascii_digit) {
            out.push(MARK);
        }
        from = at + len;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// `text` read back from the index with the symbols [`marked`] replaced (the marks before
/// a version are the CJK module's, which its reader removes).
pub fn unmarked(text: &str) -> Cow<'_, str> {
    if !text.contains([PLUS, SHARP]) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                PLUS => '+',
                SHARP => '#',
                c => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        marked(text)
            .replace(PLUS, "<+>")
            .replace(SHARP, "<#>")
            .replace(MARK, "|")
    }

    #[test]
    fn one_letter_names_keep_their_symbols_and_everything_else_is_untouched() {
        for (text, want) in [
            ("C++ and C# and F#.", "C<+><+> and C<#> and F<#>."),
            ("(g++), c#: C/C++", "(g<+><+>), c<#>: C/C<+><+>"),
            ("C++17 and C#10", "C<+><+>|17 and C<#>|10"),
            ("C++\nC#", "C<+><+>\nC<#>"),
        ] {
            assert_eq!(shown(text), want, "{text}");
        }
        for same in [
            "Notepad++, #tag, a#b, C#foo, C+++, C##, x+y, issue #12",
            "é#, _c++, 1c#",
            "",
        ] {
            assert_eq!(shown(same), same);
        }
        // One letter is enough: a loop's `i++` is a token of its own too, and CJK text
        // around a name does not hide it.
        assert_eq!(shown("i++"), "i<+><+>");
        assert_eq!(shown("用C#写, C#で"), "用C<#>写, C<#>で");
        assert!(matches!(marked("plain text"), Cow::Borrowed(_)));
    }

    #[test]
    fn reading_back_gives_the_text_as_written() {
        for text in ["C++17, C#, g++ -O2", "no symbols", "a 中文 C# 混合"] {
            let back = unmarked(&marked(text)).replace(MARK, "");
            assert_eq!(back, text);
        }
        assert!(matches!(unmarked("plain"), Cow::Borrowed(_)));
    }
}
