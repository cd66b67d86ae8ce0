//! Slugs: the kebab-case ASCII name of an entry, made from its title (`Retries need
//! jitter!` -> `retries-need-jitter`, `Café crème` -> `cafe-creme`).

/// The longest slug made from a title, in bytes; longer titles are cut at a word.
pub const MAX_SLUG: usize = 80;

/// The slug for `title`, or `None` when nothing of it survives (only punctuation, emoji).
pub fn slugify(title: &str) -> Option<String> {
    slugify_within(title, MAX_SLUG)
}

/// True when [`slugify`] cuts `title`'s words at [`MAX_SLUG`]: two titles that differ past
/// it make one slug.
pub fn is_cut(title: &str) -> bool {
    slugify(title) != slugify_within(title, usize::MAX)
}

fn slugify_within(title: &str, max: usize) -> Option<String> {
    // `C++` and `C#` are names, as in the index (`text::symbols`): `cpp` and `csharp`,
    // not `c`.
    let named: String = crate::text::symbols::marked(title)
        .chars()
        .filter(|&c| c != crate::text::cjk::MARK)
        .map(|c| match c {
            crate::text::symbols::PLUS => "p".to_string(),
            crate::text::symbols::SHARP => "sharp".to_string(),
            c => c.to_string(),
        })
        .collect();
    let ascii = deunicode::deunicode(&named).to_ascii_lowercase();
    let words: Vec<&str> = ascii
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut slug = String::new();
    for w in words {
        if !slug.is_empty() && slug.len().saturating_add(1 + w.len()) > max {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&w[..w.len().min(max)]);
    }
    (!slug.is_empty()).then_some(slug)
}

/// True for a kebab-case ASCII slug: lowercase letters and digits in words joined by `-`.
pub fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_become_kebab_case_ascii() {
        assert_eq!(
            slugify("Retries need jitter").as_deref(),
            Some("retries-need-jitter")
        );
        assert_eq!(
            slugify("  tokio::select! drops   branches ").as_deref(),
            Some("tokio-select-drops-branches")
        );
        assert_eq!(
            slugify("Café crème à l'œil").as_deref(),
            Some("cafe-creme-a-l-oeil")
        );
        assert_eq!(
            slugify("HTTP 429 & Retry-After").as_deref(),
            Some("http-429-retry-after")
        );
        assert_eq!(
            slugify("C++ templates vs C# generics, in C++17").as_deref(),
            Some("cpp-templates-vs-csharp-generics-in-cpp17")
        );
        assert_eq!(slugify("!!! ... ???"), None);
        assert_eq!(slugify(""), None);
        let long = slugify(&"word ".repeat(40)).unwrap();
        assert!(long.len() <= MAX_SLUG && is_kebab(&long), "{long}");
        assert!(is_cut(&"word ".repeat(40)));
        assert!(!is_cut(&"word ".repeat(10)));
        for s in ["retries-need-jitter", "a", "http-429"] {
            assert!(is_kebab(s), "{s}");
        }
        for s in ["", "Retries", "a--b", "-a", "a-", "a_b", "café"] {
            assert!(!is_kebab(s), "{s}");
        }
    }
}
