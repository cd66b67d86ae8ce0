//! Rules about written text that the index, search, `similar` and the knowledge base share:
//! where words are in scripts written without spaces ([`cjk`]), and which names keep
//! their symbols (`C++`, `C#`: [`symbols`]), and one spelling for names Unicode writes two
//! ways ([`unicode_form`]). Below every stage, so each can use them.

pub(crate) mod cjk;
pub(crate) mod symbols;
pub(crate) mod unicode_form;

use std::borrow::Cow;

/// Characters that show as nothing and carry no meaning in a word: a soft hyphen, a
/// zero-width space, a word joiner, a byte-order mark. FTS5's tokenizer reads each as a
/// word break, so `deploy<U+200B>ment` (pasted from a web page) was two words that
/// `deployment` did not find. (The zero-width joiners, which shape Persian, Indic scripts
/// and emoji, are kept.)
const INVISIBLE: [char; 4] = ['\u{AD}', '\u{200B}', '\u{2060}', '\u{FEFF}'];

/// `text` without [`INVISIBLE`] characters; borrowed when it has none. Notes are indexed
/// and named (`note::name_key`) so, and queries read so, so that all break words alike.
pub fn visible(text: &str) -> Cow<'_, str> {
    match text.contains(INVISIBLE) {
        true => Cow::Owned(text.replace(INVISIBLE, "")),
        false => Cow::Borrowed(text),
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn cut_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` with every control character (a newline, a tab, a terminal's escape sequence) and
/// every mark that turns text around ([`is_bidi_control`]) as U+FFFD: a file name, a slug
/// or a logged query is shown on one line, cannot drive the terminal, and cannot show
/// `invoice<U+202E>dm.exe` as `invoiceexe.md`. Borrowed when it has none.
pub fn without_controls(s: &str) -> Cow<'_, str> {
    replaced(s, |c| c.is_control() || is_bidi_control(c))
}

/// `s` with each character `bad` names as U+FFFD; borrowed when it has none.
fn replaced(s: &str, bad: impl Fn(char) -> bool) -> Cow<'_, str> {
    match s.chars().any(&bad) {
        true => s
            .chars()
            .map(|c| if bad(c) { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into(),
        false => s.into(),
    }
}

/// The most characters of a title a result shows, and the most tags.
pub const TITLE_SHOWN: usize = 300;
/// See [`TITLE_SHOWN`].
pub const TAGS_SHOWN: usize = 50;

/// A note's title (or type) as a result row shows it: cut to [`TITLE_SHOWN`] characters
/// with `…`. Both are the note's to say, and one of 500,000 characters made each search's
/// answer megabytes (into an assistant's context, through MCP).
pub fn title_shown(title: String) -> String {
    match title.char_indices().nth(TITLE_SHOWN) {
        None => title,
        Some((at, _)) => format!("{}…", &title[..at]),
    }
}

/// A note's tags as a result row shows them: the first [`TAGS_SHOWN`] (see
/// [`title_shown`]).
pub fn tags_shown(mut tags: Vec<String>) -> Vec<String> {
    tags.truncate(TAGS_SHOWN);
    tags.iter_mut()
        .for_each(|t| *t = title_shown(std::mem::take(t)));
    tags
}

/// [`without_controls`] for text of several lines (a diff): its newlines and tabs kept.
pub fn without_controls_but_lines(s: &str) -> Cow<'_, str> {
    replaced(s, |c| c.is_control() && c != '\n' && c != '\t')
}

/// Whether `c` changes the direction text is shown in (U+202A-U+202E, U+2066-U+2069, the
/// marks U+200E, U+200F and U+061C): in a title or an error line it can show a file name
/// backwards (`exe.md` as `dm.exe`) without being seen itself.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_shown_has_no_control_and_no_mark_that_turns_it_around() {
        assert_eq!(
            without_controls("lore/x\u{202E}dm.exe"),
            "lore/x\u{FFFD}dm.exe"
        );
        assert_eq!(without_controls("t\x1b[2J"), "t\u{FFFD}[2J");
        assert!(matches!(without_controls("lore/café.md"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_huge_title_and_tag_list_are_cut_for_a_result_row() {
        let title = "é".repeat(500_000);
        let shown = title_shown(title);
        assert_eq!(shown.chars().count(), TITLE_SHOWN + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(title_shown("short".into()), "short");
        let tags = tags_shown((0..20_000).map(|i| format!("tag{i}")).collect());
        assert_eq!(tags.len(), TAGS_SHOWN);
        assert_eq!(tags[0], "tag0");
    }

    #[test]
    fn cuts_on_char_boundaries() {
        assert_eq!(cut_at_char("héllo", 2), "h");
        assert_eq!(cut_at_char("héllo", 3), "hé");
        assert_eq!(cut_at_char("abc", 10), "abc");
        assert_eq!(cut_at_char("😀😀", 5), "😀");
        assert_eq!(cut_at_char("😀", 3), "");
    }
}
