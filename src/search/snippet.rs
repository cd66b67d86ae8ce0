//! Making passages fit one line of a terminal or a panel row.

/// Collapses runs of whitespace (newlines included) to single spaces and trims.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_whitespace() {
        assert_eq!(one_line("  a\n\n b\tc  "), "a b c");
    }

    #[test]
    fn truncates_at_words() {
        assert_eq!(truncate("hello wonderful world", 15), "hello wonderful...");
        assert_eq!(truncate("hello wonderful world", 12), "hello wonder...");
        assert_eq!(truncate("short", 15), "short");
        assert_eq!(truncate("ééééééééé", 4), "éééé...");
    }
}
