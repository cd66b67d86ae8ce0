//! One spelling for names that Unicode writes two ways: `é` is one code point (NFC, what
//! keyboards type) or `e` and a combining accent (NFD, what older macOS file systems
//! stored, and what some tools still write). Two such names are the same name to the
//! person; compared as bytes they differ, so a link typed in NFC to a file named in NFD
//! would be "no such note".

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// `s` in NFC; borrowed when it already is (all ASCII text is).
pub fn nfc(s: &str) -> Cow<'_, str> {
    match is_nfc_quick(s.chars()) {
        IsNormalized::Yes => Cow::Borrowed(s),
        _ => Cow::Owned(s.nfc().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_of_a_name_meet_in_one() {
        let composed = "lore/caf\u{e9}.md";
        let decomposed = "lore/cafe\u{301}.md";
        assert_ne!(composed, decomposed);
        assert_eq!(nfc(decomposed), composed);
        assert!(matches!(nfc(composed), Cow::Borrowed(_)));
        assert!(matches!(nfc("lore/plain.md"), Cow::Borrowed(_)));
    }
}
