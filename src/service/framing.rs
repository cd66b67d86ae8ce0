//! Reading one request line without trusting its sender: a line may be cut off, never end,
//! or be far longer than any request; none of that may cost more than [`MAX_LINE_BYTES`]
//! of memory.
//!
//! [`MAX_LINE_BYTES`]: super::protocol::MAX_LINE_BYTES

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What a line read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line, newline removed.
    Complete(Vec<u8>),
    /// The end of input, after these bytes of an unterminated last line (maybe none).
    Eof(Vec<u8>),
    /// More than the limit without a newline; the rest is left unread.
    TooLong,
}

/// Reads up to the next `\n`, refusing to hold more than `max` bytes of it.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Line::Eof(line));
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        if line.len() + take > max {
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Line::Complete(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_partial_lines_and_long_lines() {
        let mut input: &[u8] = b"one\n\ntwo\nthr";
        assert_eq!(
            read_line(&mut input, 10).await.unwrap(),
            Line::Complete(b"one".to_vec())
        );
        assert_eq!(
            read_line(&mut input, 10).await.unwrap(),
            Line::Complete(Vec::new())
        );
        assert_eq!(
            read_line(&mut input, 10).await.unwrap(),
            Line::Complete(b"two".to_vec())
        );
        assert_eq!(
            read_line(&mut input, 10).await.unwrap(),
            Line::Eof(b"thr".to_vec())
        );
        let mut long: &[u8] = b"0123456789abc\nnext\n";
        assert_eq!(read_line(&mut long, 10).await.unwrap(), Line::TooLong);
        let mut exact: &[u8] = b"0123456789\n";
        assert_eq!(
            read_line(&mut exact, 10).await.unwrap(),
            Line::Complete(b"0123456789".to_vec())
        );
    }
}
