//! Splitting a note into passages for the embedding model: one section per heading, packed
//! into chunks of about [`TARGET_CHARS`] (roughly 250 tokens, inside every supported model's
//! window) with the last line of a chunk repeated at the start of the next. Fenced code stays
//! whole unless it alone exceeds [`MAX_CHARS`]. Each chunk carries the note title and its
//! heading, so a passage read out of context still says what it is about.

use sha2::{Digest, Sha256};

use crate::note::Note;

/// Packing stops adding lines once a chunk reaches this many characters.
pub const TARGET_CHARS: usize = 900;
/// A single block longer than this is split by lines (and a line by characters).
pub const MAX_CHARS: usize = 1400;
/// The last unit of a chunk is repeated in the next one when it is at most this long.
const OVERLAP_CHARS: usize = 200;

/// One passage of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Position within the note, from 0.
    pub seq: u32,
    /// First line of the passage in the file (1-based).
    pub line: u32,
    /// Last line of the passage in the file.
    pub end_line: u32,
    /// The nearest heading above the passage (empty before the first heading).
    pub heading: String,
    /// What is embedded: title, heading and passage.
    pub text: String,
    /// SHA-256 of `text`: identical passages share one vector.
    pub hash: [u8; 32],
}

/// A run of body lines that is never split unless it is huge: one line, or one code fence.
struct Unit {
    start: usize,
    end: usize, // exclusive
    chars: usize,
    code: bool,
}

/// Splits `note` into chunks. A note with no body text still gets one chunk (its title).
pub fn chunk_note(note: &Note) -> Vec<Chunk> {
    let raw: Vec<&str> = note.body.split('\n').collect();
    let text: Vec<&str> = note.text.split('\n').collect();
    let text_at = |i: usize| text.get(i).copied().unwrap_or("");
    // By line, looked up once per line: a scan of every heading per line was quadratic
    // (a note of 200,000 `## a` lines took 19 s to index).
    let mut by_line = std::collections::HashMap::with_capacity(note.headings.len());
    for h in &note.headings {
        by_line.entry(h.line as usize).or_insert(h);
    }
    let heading_at = |i: usize| by_line.get(&(note.body_line as usize + i)).copied();

    let mut builder = Builder {
        note,
        chunks: Vec::new(),
        text_at: &text_at,
    };
    let mut heading = String::new();
    let mut units: Vec<Unit> = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if let Some(h) = heading_at(i) {
            builder.section(&heading, std::mem::take(&mut units));
            heading = if h.level == 1 && h.text == note.title {
                String::new()
            } else {
                h.text.clone()
            };
            i += 1;
            continue;
        }
        let trimmed = raw[i].trim_start();
        let fence = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        let end = match fence {
            Some(f) => raw[i + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with(f))
                .map(|p| i + p + 2)
                .unwrap_or(raw.len()),
            None => i + 1,
        };
        let chars = (i..end).map(|j| text_at(j).trim().len()).sum();
        if chars > 0 {
            units.push(Unit {
                start: i,
                end,
                chars,
                code: fence.is_some(),
            });
        }
        i = end;
    }
    builder.section(&heading, units);

    let mut chunks = builder.chunks;
    if chunks.is_empty() {
        chunks.push(make_chunk(note, 0, note.body_line, note.body_line, "", ""));
    }
    chunks
}

struct Builder<'a, F: Fn(usize) -> &'a str> {
    note: &'a Note,
    chunks: Vec<Chunk>,
    text_at: &'a F,
}

impl<'a, F: Fn(usize) -> &'a str> Builder<'a, F> {
    /// Packs one section's units into chunks.
    fn section(&mut self, heading: &str, units: Vec<Unit>) {
        let units = units
            .into_iter()
            .flat_map(|u| self.split_huge(u))
            .collect::<Vec<_>>();
        let mut current: Vec<&Unit> = Vec::new();
        let mut len = 0;
        for unit in &units {
            if len + unit.chars > TARGET_CHARS && !current.is_empty() {
                self.flush(heading, &current);
                let last = current[current.len() - 1];
                current.clear();
                len = 0;
                if !last.code && last.chars <= OVERLAP_CHARS && last.chars + unit.chars <= MAX_CHARS
                {
                    current.push(last);
                    len = last.chars;
                }
            }
            current.push(unit);
            len += unit.chars;
        }
        if !current.is_empty() {
            self.flush(heading, &current);
        }
    }

    /// A unit above MAX_CHARS becomes several line-ranges, each at most MAX_CHARS where lines allow.
    fn split_huge(&self, unit: Unit) -> Vec<Unit> {
        if unit.chars <= MAX_CHARS {
            return vec![unit];
        }
        let mut out = Vec::new();
        let mut start = unit.start;
        let mut chars = 0;
        for j in unit.start..unit.end {
            let n = (self.text_at)(j).trim().len();
            if chars + n > MAX_CHARS && j > start {
                out.push(Unit {
                    start,
                    end: j,
                    chars,
                    code: unit.code,
                });
                start = j;
                chars = 0;
            }
            chars += n;
        }
        out.push(Unit {
            start,
            end: unit.end,
            chars,
            code: unit.code,
        });
        out
    }

    fn flush(&mut self, heading: &str, units: &[&Unit]) {
        let mut passage = String::new();
        // Where each file line starts in the passage, for the pieces' own lines.
        let mut starts: Vec<(usize, u32)> = Vec::new();
        for u in units {
            for j in u.start..u.end {
                let line = (self.text_at)(j).trim_end();
                if line.trim().is_empty() {
                    continue;
                }
                if !passage.is_empty() {
                    passage.push('\n');
                }
                starts.push((passage.len(), self.note.body_line + j as u32));
                passage.push_str(line);
            }
        }
        // A passage longer than MAX_CHARS (a line of minified text, indented code whose
        // lines were measured trimmed) is cut by chars: each piece gets the lines it holds,
        // so that a hit on the second piece of a long code block points at that piece, not
        // pages before it at the block's first line.
        let pieces = cut_chars(&passage, MAX_CHARS);
        let first = self.note.body_line + units[0].start as u32;
        let last = self.note.body_line + units[units.len() - 1].end as u32 - 1;
        let base = passage.as_ptr() as usize;
        let line_at = |offset: usize| {
            starts
                .iter()
                .rev()
                .find(|(at, _)| *at <= offset)
                .map(|(_, line)| *line)
        };
        let whole = pieces.len() == 1;
        for piece in pieces {
            let seq = self.chunks.len() as u32;
            let (from, to) = match whole {
                true => (first, last),
                false => {
                    let at = piece.as_ptr() as usize - base;
                    (
                        line_at(at).unwrap_or(first),
                        line_at(at + piece.len().saturating_sub(1)).unwrap_or(last),
                    )
                }
            };
            self.chunks
                .push(make_chunk(self.note, seq, from, to, heading, piece));
        }
    }
}

fn cut_chars(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let mut cut = crate::text::cut_at_char(rest, max).len();
        if let Some(space) = rest[..cut]
            .rfind(char::is_whitespace)
            .filter(|&p| p > max / 2)
        {
            cut = space;
        }
        out.push(&rest[..cut]);
        rest = rest[cut..].trim_start();
    }
    out.push(rest);
    out
}

fn make_chunk(
    note: &Note,
    seq: u32,
    line: u32,
    end_line: u32,
    heading: &str,
    passage: &str,
) -> Chunk {
    let mut text = note.title.clone();
    if !heading.is_empty() {
        text.push('\n');
        text.push_str(heading);
    }
    if !passage.is_empty() {
        text.push('\n');
        text.push_str(passage);
    }
    let hash = Sha256::digest(text.as_bytes()).into();
    Chunk {
        seq,
        line,
        end_line,
        heading: heading.to_string(),
        text,
        hash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::note::parse;

    fn chunks(src: &str) -> Vec<Chunk> {
        chunk_note(&parse("lore/x.md", src.as_bytes()).0)
    }

    #[test]
    fn title_and_heading_are_carried_and_frontmatter_is_not_embedded() {
        let c = chunks("---\ntitle: Flags\nsecret: hunter2\n---\n# Flags\n\nintro\n\n## Cleanup\n\nremove them\n");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].text, "Flags\nintro");
        assert_eq!(c[1].text, "Flags\nCleanup\nremove them");
        assert_eq!(c[1].line, 11);
        assert!(c.iter().all(|c| !c.text.contains("hunter2")));
    }

    #[test]
    fn long_sections_split_with_overlap_and_bounded_size() {
        let body: String = (0..60)
            .map(|i| format!("line number {i} with a few words in it\n"))
            .collect();
        let c = chunks(&format!("# T\n{body}"));
        assert!(c.len() > 2);
        for w in c.windows(2) {
            let last_line = w[0].text.lines().last().unwrap();
            assert!(
                w[1].text.lines().nth(1) == Some(last_line),
                "overlap missing"
            );
        }
        assert!(c.iter().all(|c| c.text.len() <= MAX_CHARS + 100));
    }

    #[test]
    fn code_fences_stay_whole() {
        let code: String = (0..15)
            .map(|i| format!("let x{i} = compute({i});\n"))
            .collect();
        let filler: String = (0..20)
            .map(|i| format!("prose line {i} about things\n"))
            .collect();
        let c = chunks(&format!("# T\n{filler}\n```rust\n{code}```\n"));
        let with_code: Vec<_> = c.iter().filter(|c| c.text.contains("let x0")).collect();
        assert_eq!(with_code.len(), 1);
        assert!(with_code[0].text.contains("let x14"));
    }

    #[test]
    fn each_piece_of_a_cut_passage_has_its_own_lines() {
        // Indented lines are measured trimmed but kept indented: the joined passage runs
        // past MAX_CHARS and is cut, and each piece must say which lines it holds.
        let code: String = (0..60)
            .map(|i| format!("          \"field_{i}\": \"value number {i}\",\n"))
            .collect();
        let c = chunks(&format!("# T\n\n```json\n{{\n{code}}}\n```\n"));
        let pieces: Vec<_> = c.iter().filter(|c| c.text.contains("field_")).collect();
        assert!(pieces.len() >= 2, "{pieces:?}");
        for piece in &pieces {
            let n: u32 = piece
                .text
                .lines()
                .find_map(|l| l.trim().strip_prefix("\"field_"))
                .and_then(|rest| rest.split('"').next()?.parse().ok())
                .expect("a field line");
            // The code starts at file line 5 (`{` on line 4).
            assert!(piece.line <= 5 + n && 5 + n <= piece.end_line, "{piece:?}");
        }
        assert!(
            pieces.windows(2).all(|w| w[0].line < w[1].line),
            "{pieces:?}"
        );
    }

    #[test]
    fn huge_single_line_is_cut() {
        let c = chunks(&"word ".repeat(2000));
        assert!(c.len() >= 7);
        assert!(c.iter().all(|c| c.text.len() <= MAX_CHARS + 10));
    }

    #[test]
    fn empty_note_gets_a_title_chunk() {
        let c = chunks("");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].text, "x");
    }

    #[test]
    fn identical_text_identical_hash() {
        assert_eq!(chunks("# A\nsame")[0].hash, chunks("# A\nsame")[0].hash);
        assert_ne!(chunks("# A\nsame")[0].hash, chunks("# A\ndiff")[0].hash);
    }
}
