//! Chinese, Japanese and Korean text as the full-text index reads it: one token per
//! character.
//!
//! FTS5's `unicode61` tokenizer splits on spaces and punctuation, and these scripts put no
//! space between words: `如何配置代理服务器` was one token, so `代理` found nothing, and only
//! the whole run typed again did. Every character of these scripts is therefore set apart
//! by a zero-width space (a separator to the tokenizer, invisible if ever shown) in what is
//! indexed and in what is searched for; a query word of several such characters becomes a
//! phrase of them, so `代理` matches those two characters side by side, wherever they stand:
//! what a search inside a text finds. Readers of the indexed text take the marks out again
//! ([`unspaced`]), so snippets, bodies and line numbers are the note's own text.

use std::borrow::Cow;

/// What sets a character apart: U+200B ZERO WIDTH SPACE (category Cf, a separator to
/// `unicode61`).
pub const MARK: char = '\u{200B}';

/// Whether `c` is written without spaces between words: Han ideographs, kana and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF          // Hangul Jamo
        | 0x3040..=0x30FF        // Hiragana, Katakana
        | 0x3130..=0x318F        // Hangul compatibility Jamo
        | 0x31F0..=0x31FF        // Katakana phonetic extensions
        | 0x3400..=0x4DBF        // CJK Extension A
        | 0x4E00..=0x9FFF        // CJK Unified Ideographs
        | 0xAC00..=0xD7AF        // Hangul syllables
        | 0xF900..=0xFAFF        // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F        // Halfwidth Katakana
        | 0x20000..=0x3134F // CJK Extensions B to G, compatibility supplement
    )
}

/// `text` with [`MARK`] between each CJK character and whatever touches it (another such
/// character, a Latin word, punctuation); unchanged (borrowed) when it holds none.
pub fn spaced(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_cjk) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if let Some(p) = prev {
            if (is_cjk(p) || is_cjk(c))
                && !p.is_whitespace()
                && !c.is_whitespace()
                && p != MARK
                && c != MARK
            {
                out.push(MARK);
            }
        }
        out.push(c);
        prev = Some(c);
    }
    Cow::Owned(out)
}

/// `text` read back from the index without the marks [`spaced`] put in.
pub fn unspaced(text: &str) -> Cow<'_, str> {
    match text.contains(MARK) {
        true => Cow::Owned(text.replace(MARK, "")),
        false => Cow::Borrowed(text),
    }
}

/// The overlapping pairs of characters of `run` (`连接池` -> `连接`, `接池`); none for a
/// run of one. What stands in for words where a script writes none apart: a query's run
/// typed without spaces, a draft's runs in `similar`.
pub fn pairs(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    chars.windows(2).map(|p| p.iter().collect()).collect()
}

/// `token` cut where it passes between CJK and other characters (`Rust的所有权` -> `Rust`,
/// `的所有权`), each part with whether it is CJK.
pub fn script_parts(token: &str) -> Vec<(&str, bool)> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (at, c) in token.char_indices() {
        let cjk = is_cjk(c);
        if current.is_some_and(|k| k != cjk) {
            parts.push((&token[start..at], !cjk));
            start = at;
        }
        current = Some(cjk);
    }
    if let Some(cjk) = current {
        parts.push((&token[start..], cjk));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cjk_character_is_set_apart_and_other_text_is_untouched() {
        let m = MARK;
        assert_eq!(
            spaced("如何配置代理"),
            format!("如{m}何{m}配{m}置{m}代{m}理")
        );
        assert_eq!(
            spaced("Rust的所有权。"),
            format!("Rust{m}的{m}所{m}有{m}权{m}。")
        );
        assert_eq!(
            spaced("キャッシュ clear"),
            format!("キ{m}ャ{m}ッ{m}シ{m}ュ clear")
        );
        assert_eq!(spaced("서버 설정"), format!("서{m}버 설{m}정"));
        assert!(matches!(spaced("plain English, café"), Cow::Borrowed(_)));
        // Marking twice changes nothing more, and reading back gives the text as written.
        let once = spaced("代理\n服务器 x").into_owned();
        assert_eq!(spaced(&once), once);
        assert_eq!(unspaced(&once), "代理\n服务器 x");
        assert!(matches!(unspaced("no marks"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_their_numbers() {
        let text = "标题\n\n第一行\n第二行";
        assert_eq!(spaced(text).lines().count(), text.lines().count());
    }
}
