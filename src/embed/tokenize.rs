//! Text to token ids: the model's own `tokenizer.json`, with truncation and padding set here
//! rather than trusted from the file (MiniLM's file hard-codes 128 tokens and fixed padding).

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// Bytes of text kept per token of the window before tokenising. Truncation happens after
/// tokenisation, so without a cut a 10 MB paste would be tokenised whole only to be thrown
/// away; no real token is this long, so the cut never changes what the model sees.
const MAX_BYTES_PER_TOKEN: usize = 32;

/// A tokenizer set up for one model's window.
pub struct TextTokenizer {
    inner: Tokenizer,
    max_tokens: usize,
}

impl TextTokenizer {
    /// Reads `tokenizer.json` bytes; every text is cut to `max_tokens` (special tokens included).
    pub fn from_bytes(bytes: &[u8], max_tokens: usize) -> Result<TextTokenizer, String> {
        let mut inner = Tokenizer::from_bytes(bytes).map_err(|e| format!("tokenizer.json: {e}"))?;
        inner
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| format!("tokenizer.json: {e}"))?;
        inner.with_padding(None);
        Ok(TextTokenizer { inner, max_tokens })
    }

    /// Token ids of each text, special tokens added, at most `max_tokens` each.
    pub fn encode(&self, texts: &[String]) -> Result<Vec<Vec<u32>>, String> {
        let cut: Vec<&str> = texts
            .iter()
            .map(|t| crate::text::cut_at_char(t, self.max_tokens * MAX_BYTES_PER_TOKEN))
            .collect();
        let encodings = self
            .inner
            .encode_batch(cut, true)
            .map_err(|e| format!("tokenizing: {e}"))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// The share of `text`'s tokens (special ones aside) that the model cannot read: those
    /// the vocabulary does not know (`[UNK]`: most Han characters and emoji for MiniLM's
    /// and nomic's English vocabulary), and Hangul jamo. BERT's uncased normaliser splits
    /// each Hangul syllable into its jamo, which the vocabulary holds one by one, so Korean
    /// is never `[UNK]`; but letters spelled one by one carry no meaning the model learnt,
    /// and any two Korean texts aligned near 1.0. 0 when the vocabulary names no unknown
    /// token.
    pub fn unknown_share(&self, text: &str) -> f32 {
        let Some(unk) = self.inner.token_to_id("[UNK]") else {
            return 0.0;
        };
        let cut = crate::text::cut_at_char(text, self.max_tokens * MAX_BYTES_PER_TOKEN);
        let Ok(encoding) = self.inner.encode(cut, false) else {
            return 0.0;
        };
        let ids = encoding.get_ids();
        let unreadable = ids
            .iter()
            .zip(encoding.get_tokens())
            .filter(|(&id, token)| id == unk || is_jamo(token))
            .count();
        match ids.len() {
            0 => 0.0,
            n => unreadable as f32 / n as f32,
        }
    }

    /// The window, in tokens.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

/// Whether a vocabulary token is Hangul jamo only (`ᄌ`, `##ᅢ`).
fn is_jamo(token: &str) -> bool {
    let letters = token.strip_prefix("##").unwrap_or(token);
    !letters.is_empty()
        && letters.chars().all(|c| {
            // Jamo, compatibility jamo, extended-A and extended-B.
            matches!(c,
                '\u{1100}'..='\u{11FF}'
                | '\u{3130}'..='\u{318F}'
                | '\u{A960}'..='\u{A97F}'
                | '\u{D7B0}'..='\u{D7FF}')
        })
}
