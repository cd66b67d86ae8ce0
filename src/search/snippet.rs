//! Making passages fit one line of a terminal or a panel row.

use crate::text::cjk::is_cjk;

/// Longest word a snippet shows whole, in characters: a base64 blob or a minified line is
/// one token to FTS5, and a snippet of it would otherwise be megabytes.
pub const WORD_CHARS: usize = 64;

/// `c` as it may be printed to a terminal: a control character (an escape sequence's
/// start, a NUL of a binary file) becomes U+FFFD so a note cannot drive the terminal that
/// shows it; a tab, which only moves the cursor, stays.
pub fn printable(c: char) -> char {
    match c {
        '\t' => c,
        c if c.is_control() => '\u{FFFD}',
        c => c,
    }
}

/// Collapses runs of whitespace (newlines included) to single spaces and trims; a word
/// longer than [`WORD_CHARS`] keeps its start and end around a `…`, and control characters
/// (a terminal's escape sequences among them) become U+FFFD, so a note cannot drive the
/// terminal that prints its snippet.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4096));
    // Whether a mark is open where the next word starts: FTS5 marks a phrase whole, spaces
    // and all, so a mark may open in one word and close in a later one.
    let mut open = false;
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let chars = word.chars().count();
        if chars <= WORD_CHARS {
            out.extend(word.chars().map(printable));
        } else if word.contains(['«', '»']) {
            out.push_str(&around_first_mark(word, open));
        } else {
            // Both ends stay: the start says what it is, the end where it goes.
            let tail = WORD_CHARS / 4;
            out.extend(word.chars().take(WORD_CHARS - tail - 1).map(printable));
            out.push('…');
            out.extend(word.chars().skip(chars - tail).map(printable));
        }
        open = word.chars().fold(open, |o, c| match c {
            '«' => true,
            '»' => false,
            _ => o,
        });
    }
    out
}

/// A long word (a URL, a path) that holds a mark, cut to about [`WORD_CHARS`] characters
/// around its first mark (`open`: a mark opened in an earlier word is open where it
/// starts), `…` where it was cut, a mark cut open at either end closed or opened again:
/// cutting by position split marks (`«kubect…`) or cut the hit out. A mark still open at
/// the word's own end goes on into the next word. (Only such words are touched: a note's
/// own `«` and `»` elsewhere are its text.)
fn around_first_mark(word: &str, open: bool) -> String {
    let chars: Vec<char> = word.chars().collect();
    let first = chars
        .iter()
        .position(|&c| c == '«' || c == '»')
        .unwrap_or(0);
    // The marked stretch: from its `«` to its `»` (or the word's end); a `»` first closes
    // a mark opened before the word, which then runs from the word's start.
    let (from, to) = match chars[first] {
        '»' => (0, first),
        _ => {
            let close = chars[first..].iter().position(|&c| c == '»');
            (first, close.map_or(chars.len() - 1, |i| first + i))
        }
    };
    // The marked stretch itself too long (a blob that matched): its two ends.
    let (start, end, kept): (usize, usize, Vec<char>) = if to - from + 1 > WORD_CHARS {
        let tail = WORD_CHARS / 4;
        let mut kept: Vec<char> = chars[from..from + WORD_CHARS - tail - 1].to_vec();
        kept.push('…');
        kept.extend_from_slice(&chars[to + 1 - tail..=to]);
        (from, to + 1, kept)
    } else {
        let spare = WORD_CHARS - (to - from + 1);
        let start = from.saturating_sub(spare / 2);
        let end = (start + WORD_CHARS).min(chars.len());
        let start = end.saturating_sub(WORD_CHARS);
        (start, end, chars[start..end].to_vec())
    };
    let mut inside = chars[..start].iter().fold(open, |o, &c| match c {
        '«' => true,
        '»' => false,
        _ => o,
    });
    let mut out = String::with_capacity(WORD_CHARS * 4);
    if start > 0 {
        out.push('…');
        if inside {
            out.push('«');
        }
    }
    for c in kept {
        match c {
            '«' => inside = true,
            '»' => inside = false,
            _ => {}
        }
        out.push(printable(c));
    }
    if end < chars.len() {
        if inside {
            out.push('»');
        }
        out.push('…');
    }
    // A `«` that was the window's last character, closed at once, marks nothing.
    out.replace("«»", "")
}

/// Cuts `s` to at most `max` characters at a word boundary, adding `...` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(p) if p > max / 2 => &cut[..p],
        _ => &cut[..],
    };
    format!("{}...", cut.trim_end())
}

/// A note's own `«` and `»` as snippets show them, `‹` and `›`: in a snippet, `«»` are the
/// marks around matched words (the panel and a terminal draw them as highlight), and a
/// French quotation in a note read as a match.
pub fn without_marks(text: &str) -> std::borrow::Cow<'_, str> {
    match text.contains(['«', '»']) {
        true => text.replace('«', "‹").replace('»', "›").into(),
        false => text.into(),
    }
}

/// Longest semantic passage shown as a snippet, in characters.
pub const PASSAGE_CHARS: usize = 200;

/// Puts «marks» around whole-word, case-insensitive occurrences of `words` (at least three
/// letters) so a semantic passage shows any words it shares with the query. Chinese,
/// Japanese and Korean write words without spaces, so a word of theirs ([`worth_marking`]
/// at any length) is marked wherever it stands inside a run of such characters, as the
/// full-text index finds it (`text::cjk`).
pub fn mark_words(text: &str, words: &[String]) -> String {
    let wanted: Vec<String> = words
        .iter()
        .filter(|w| worth_marking(w))
        .map(|w| w.to_lowercase())
        .collect();
    if wanted.is_empty() {
        return text.to_string();
    }
    // Longest first: a run holding both `代理` and `代理服务器` marks the longer.
    let mut in_runs: Vec<&str> = wanted
        .iter()
        .filter(|w| w.chars().all(is_cjk))
        .map(String::as_str)
        .collect();
    in_runs.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |out: &mut String, word: &mut String| {
        if word.is_empty() {
            return;
        }
        if wanted.contains(&word.to_lowercase()) {
            out.push('«');
            out.push_str(word);
            out.push('»');
        } else if word.chars().all(is_cjk) && !in_runs.is_empty() {
            mark_inside(out, word, &in_runs);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        // A CJK run and a Latin word touching it are two words (`Rust的所有权`).
        if c.is_alphanumeric() {
            if word.chars().last().is_some_and(|p| is_cjk(p) != is_cjk(c)) {
                flush(&mut out, &mut word);
            }
            word.push(c);
        } else {
            flush(&mut out, &mut word);
            out.push(c);
        }
    }
    flush(&mut out, &mut word);
    out
}

/// Whether a query word is marked in a passage: three letters or more, or any word of a
/// script written without spaces (`代理` is a word; `it` is noise).
pub fn worth_marking(word: &str) -> bool {
    word.chars().count() >= 3 || word.chars().any(is_cjk)
}

/// `run` (CJK characters only) into `out` with every occurrence of any of `words` marked,
/// left to right, the longest word first where two start at one place.
fn mark_inside(out: &mut String, run: &str, words: &[&str]) {
    let mut rest = run;
    while !rest.is_empty() {
        match words.iter().find(|w| rest.starts_with(**w)) {
            Some(w) => {
                out.push('«');
                out.push_str(w);
                out.push('»');
                rest = &rest[w.len()..];
            }
            None => {
                let next = rest.chars().next().map_or(rest.len(), char::len_utf8);
                out.push_str(&rest[..next]);
                rest = &rest[next..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn marks_cjk_words_inside_their_runs() {
        let words = vec![
            "代理".to_string(),
            "キャッシュ".to_string(),
            "rust".to_string(),
        ];
        assert_eq!(
            mark_words("如何配置代理服务器，Rust的代理", &words),
            "如何配置«代理»服务器，«Rust»的«代理»"
        );
        assert_eq!(
            mark_words("ブラウザのキャッシュ", &words),
            "ブラウザの«キャッシュ»"
        );
        assert!(worth_marking("代") && !worth_marking("it"));
    }

    #[test]
    fn marks_whole_words_only() {
        let words = vec!["flag".to_string(), "it".to_string()];
        assert_eq!(
            mark_words("Flag flags, flag! it", &words),
            "«Flag» flags, «flag»! it"
        );
    }

    use super::*;

    #[test]
    fn collapses_whitespace() {
        assert_eq!(one_line("  a\n\n b\tc  "), "a b c");
        let blob = format!("«{}narwhal»", "x".repeat(5_000_000));
        let short = one_line(&format!("see {blob} here"));
        assert_eq!(short.chars().count(), 4 + WORD_CHARS + 5);
        assert!(short.starts_with("see «xxx") && short.ends_with("xnarwhal» here"));
        assert!(short.contains('…'));
    }

    #[test]
    fn a_long_word_is_cut_around_its_first_mark_and_its_marks_stay_paired() {
        let balanced = |s: &str| {
            s.chars().try_fold(false, |open, c| match c {
                '«' if !open => Some(true),
                '»' if open => Some(false),
                '«' | '»' => None,
                _ => Some(open),
            }) == Some(false)
        };
        let url = "<https://kubernetes.io/docs/reference/«kubectl»/«generated»/«kubectl»_diff/>.";
        let short = one_line(url);
        assert!(short.chars().count() <= WORD_CHARS + 4, "{short}");
        assert!(short.contains("«kubectl»"), "{short}");
        assert!(balanced(&short), "{short}");
        // A phrase marked whole runs from a long word into the next one, and back.
        let long = "a".repeat(80);
        for text in [
            format!("https://x.io/{long}/«kubectl get» pods"),
            format!("«see https://x.io/»{long} now"),
            format!("«see {long}/this»/{long} now"),
        ] {
            let short = one_line(&text);
            assert!(balanced(&short), "{text:?} -> {short:?}");
            assert!(!short.contains("«»"), "{short:?}");
        }
        assert!(one_line(&format!("https://x.io/{long}/«kubectl get» pods"))
            .ends_with("/«kubectl get» pods"));
        // A note's own guillemets outside long words are its text, left as written.
        assert_eq!(
            one_line("Home » Guides » «Retry» policy « Back"),
            "Home » Guides » «Retry» policy « Back"
        );
        // A hit late in the word is shown, not cut out of the middle.
        let late = format!("{}/«generated»/{}", "a".repeat(80), "b".repeat(80));
        let short = one_line(&late);
        assert!(short.starts_with('…') && short.ends_with('…'), "{short}");
        assert!(short.contains("/«generated»/"), "{short}");
        // Unmarked: both ends, as before.
        let plain = one_line(&"z".repeat(100));
        assert_eq!(plain.chars().count(), WORD_CHARS);
        assert_eq!(
            one_line("a\u{1b}]0;PWNED\u{7} b"),
            "a\u{FFFD}]0;PWNED\u{FFFD} b"
        );
    }

    #[test]
    fn truncates_at_words() {
        assert_eq!(truncate("hello wonderful world", 15), "hello wonderful...");
        assert_eq!(truncate("hello wonderful world", 12), "hello wonder...");
        assert_eq!(truncate("short", 15), "short");
        assert_eq!(truncate("ééééééééé", 4), "éééé...");
    }
}
