//! The MCP server's input: stdin line by line, each line a client meant as JSON made JSON.
//!
//! The protocol library drops a line that does not parse, without a reply or a word on
//! stderr (a deliberate choice of the MCP SDKs: there is no id to answer), so the client
//! waits for its tool call until its own timeout. Some of those lines are a client's
//! honest request: Node's `JSON.stringify` writes a lone surrogate (`"\ud83d"`, half an
//! emoji cut by a slice) that strict parsers refuse, and a client may pass bytes that are
//! not UTF-8 or a raw control character inside a string. Those are repaired (the
//! replacement character for what cannot be read, an escape for a control character) and
//! answered; a line still not JSON is passed on to be dropped, with a warning here.

use std::borrow::Cow;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

/// A reader of `input`'s lines, repaired, for the protocol library; the copying runs as a
/// task on the current runtime and ends with `input` (or when the reader is dropped).
/// Lines up to `longest` bytes are repaired, the longest the server reads (a draft as
/// long as a note may be, every character escaped: a lone surrogate at its end is as
/// likely as in a short one); a longer line, which the server drops anyway, goes through
/// unread. The last line gets the newline it lacked: the protocol library answers only
/// whole lines, and `printf '%s' "$request" | brain mcp` lost its one request. The input's
/// end reaches the library once `in_flight` has no call running.
pub fn repaired<R: AsyncRead + Unpin + Send + 'static>(
    input: R,
    longest: usize,
    in_flight: std::sync::Arc<super::in_flight::InFlight>,
) -> tokio::io::DuplexStream {
    let (mut tx, rx) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        // Inside a line too long to repair: its bytes go through as they come.
        let mut passing = false;
        loop {
            let buf = match input.fill_buf().await {
                Ok(buf) => buf,
                Err(e) => {
                    tracing::warn!(error = %e, "reading stdin");
                    break;
                }
            };
            if buf.is_empty() {
                let last = match passing {
                    true => Vec::new(),
                    false => repair(&line).into_owned(),
                };
                if passing || !line.is_empty() {
                    let _ = tx.write_all(&last).await;
                    let _ = tx.write_all(b"\n").await;
                }
                // The end is passed on once every call is answered (see `in_flight`).
                in_flight
                    .settled(super::in_flight::GRACE, super::in_flight::LIMIT)
                    .await;
                break;
            }
            let (chunk, ends_line) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            let taken = chunk.len();
            let sent = if passing {
                tx.write_all(chunk).await
            } else if line.len() + chunk.len() > longest {
                passing = true;
                let head = std::mem::take(&mut line);
                match tx.write_all(&head).await {
                    Ok(()) => tx.write_all(chunk).await,
                    e => e,
                }
            } else {
                line.extend_from_slice(chunk);
                if ends_line {
                    let whole = std::mem::take(&mut line);
                    tx.write_all(&repair(&whole)).await
                } else {
                    Ok(())
                }
            };
            input.consume(taken);
            if ends_line {
                passing = false;
            }
            if sent.is_err() {
                // The server stopped reading: it has ended.
                break;
            }
        }
    });
    rx
}

/// `line` (with its newline, if any) as JSON the client meant, or as it is.
pub fn repair(line: &[u8]) -> Cow<'_, [u8]> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) || parses(body) {
        return Cow::Borrowed(line);
    }
    let text = String::from_utf8_lossy(body);
    let mut fixed = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    // The high half of a surrogate pair waits here for its low half.
    let mut high: Option<String> = None;
    // Inside a string: escapes are copied whole below, so an escaped quote never ends one.
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'u') {
            chars.next();
            let hex: String = chars.by_ref().take(4).collect();
            let unit = u16::from_str_radix(&hex, 16)
                .ok()
                .filter(|_| hex.len() == 4);
            match unit {
                Some(0xD800..=0xDBFF) => {
                    if high.replace(format!("\\u{hex}")).is_some() {
                        fixed.push_str("\\ufffd");
                    }
                }
                Some(0xDC00..=0xDFFF) => match high.take() {
                    Some(h) => {
                        fixed.push_str(&h);
                        fixed.push_str(&format!("\\u{hex}"));
                    }
                    None => fixed.push_str("\\ufffd"),
                },
                _ => {
                    if high.take().is_some() {
                        fixed.push_str("\\ufffd");
                    }
                    fixed.push_str("\\u");
                    fixed.push_str(&hex);
                }
            }
            continue;
        }
        if high.take().is_some() {
            fixed.push_str("\\ufffd");
        }
        match c {
            '\\' => {
                // Any other escape: copied whole, so that `\\u` stays a backslash and a `u`.
                fixed.push(c);
                if let Some(next) = chars.next() {
                    fixed.push(next);
                }
            }
            '"' => {
                in_string = !in_string;
                fixed.push(c);
            }
            // A tab between tokens is JSON's whitespace; in a string (a draft's indented
            // code) it is a raw control character like the others, and was once left as
            // it was, so the line was dropped and the client waited for an answer.
            '\t' if !in_string => fixed.push(c),
            c if c < ' ' => fixed.push_str(&format!("\\u{:04x}", c as u32)),
            c => fixed.push(c),
        }
    }
    if high.is_some() {
        fixed.push_str("\\ufffd");
    }
    if !parses(fixed.as_bytes()) {
        if let Some(answerable) = too_deep(&fixed) {
            tracing::warn!(
                bytes = body.len(),
                "a request nested deeper than the parser reads was answered with an error"
            );
            return Cow::Owned(answerable.into_bytes());
        }
        tracing::warn!(
            bytes = body.len(),
            "a line on stdin is not JSON and was dropped (no request to answer)"
        );
        return Cow::Borrowed(line);
    }
    tracing::debug!("a request that was not strict JSON was repaired");
    fixed.push('\n');
    Cow::Owned(fixed.into_bytes())
}

/// For a request nested deeper than the parser goes (serde's 128 levels; the line is JSON,
/// and has an id), a request the protocol library answers with an error naming the cause,
/// under the same id: dropped, it left the client waiting for good.
fn too_deep(json: &str) -> Option<String> {
    let err = serde_json::from_str::<serde_json::Value>(json).err()?;
    if !err.to_string().contains("recursion limit") {
        return None;
    }
    let id = top_level_id(json)?;
    Some(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"the request is nested deeper than 128 levels, which brain does not read: send it flatter\"}}\n"
    ))
}

/// The top-level `"id"` of a JSON object, as written, when it is a number or a string (a
/// scan of the text: the line is too deep to parse).
fn top_level_id(json: &str) -> Option<&str> {
    let b = json.as_bytes();
    let skip_space = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    // The index just past the string that opens at `at`.
    let string_end = |at: usize| {
        let mut j = at + 1;
        while j < b.len() && b[j] != b'"' {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        (j + 1).min(b.len())
    };
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(i);
                let after = skip_space(end);
                if depth == 1 && &json[i..end] == "\"id\"" && b.get(after) == Some(&b':') {
                    let at = skip_space(after + 1);
                    let value_end = match b.get(at) {
                        Some(b'"') => string_end(at),
                        _ => {
                            let mut j = at;
                            while j < b.len() && b"0123456789-+.eE".contains(&b[j]) {
                                j += 1;
                            }
                            j
                        }
                    };
                    let value = &json[at..value_end];
                    return match serde_json::from_str::<serde_json::Value>(value) {
                        Ok(serde_json::Value::Number(_) | serde_json::Value::String(_)) => {
                            Some(value)
                        }
                        _ => None,
                    };
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `json` parses with every string read (skipping them, as `IgnoredAny` does, lets
/// a lone surrogate or a byte that is not UTF-8 through).
fn parses(json: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(json).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(line: &[u8]) -> serde_json::Value {
        let out = repair(line);
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {:?}", out))
    }

    #[test]
    fn a_request_too_deep_to_parse_is_answered_under_its_id() {
        let deep = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"search","arguments":{{"query":"tar","where":{}{}}}}},"id":{id}}}"#,
                "[".repeat(130),
                "]".repeat(130)
            )
        };
        for id in ["7", r#""a\"b""#] {
            let answered = fixed(deep(id).as_bytes());
            assert_eq!(
                answered["id"],
                serde_json::from_str::<serde_json::Value>(id).unwrap()
            );
            assert!(answered["method"]
                .as_str()
                .unwrap()
                .contains("nested deeper than 128 levels"));
        }
        // Without an id (a notification) there is nothing to answer: passed on as it is.
        let line = format!("{}\n", deep("7").replace(r#","id":7"#, ""));
        assert!(matches!(repair(line.as_bytes()), Cow::Borrowed(_)));
        // An "id" deeper down is not the request's.
        assert_eq!(top_level_id(r#"{"params":{"id":3},"x":[{"id":4}]}"#), None);
        assert_eq!(top_level_id(r#"{"method":"id","id" : 12}"#), Some("12"));
    }

    #[test]
    fn valid_lines_pass_untouched() {
        let line = br#"{"q":"caf\u00e9 \ud83d\ude00 \\ud800"}"#;
        assert!(matches!(repair(line), Cow::Borrowed(_)));
        assert!(matches!(repair(b"  \r\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(fixed(br#"{"q":"sql\ud800ite"}"#)["q"], "sql\u{fffd}ite");
        assert_eq!(fixed(br#"{"q":"a\udc00"}"#)["q"], "a\u{fffd}");
        assert_eq!(fixed(br#"{"q":"\ud83d\ud83d\ude00"}"#)["q"], "\u{fffd}😀");
        // An escaped backslash before "ud800" is text, not an escape.
        assert_eq!(fixed(b"{\"q\":\"\\\\ud800 \x01\"}")["q"], "\\ud800 \u{1}");
    }

    #[test]
    fn bytes_that_are_not_utf8_and_raw_control_characters_are_repaired() {
        assert_eq!(
            fixed(b"{\"q\":\"a\xff\xfeb\"}\n")["q"],
            "a\u{fffd}\u{fffd}b"
        );
        assert_eq!(fixed(b"{\"q\":\"a\x01b\"}")["q"], "a\u{1}b");
        // A tab in a string is repaired; between tokens it is whitespace, kept.
        assert_eq!(fixed(b"{\"q\":\t\"a\tb \\\" \tc\"}")["q"], "a\tb \" \tc");
        assert!(repair(b"{\"q\":\"a\x01b\"}\n").ends_with(b"}\n"));
    }

    #[test]
    fn what_is_not_json_is_left_as_it_is() {
        for line in [
            &b"hello world\n"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":",
        ] {
            assert_eq!(&*repair(line), line);
        }
    }

    #[tokio::test]
    async fn lines_are_copied_in_order_and_the_long_ones_whole() {
        use tokio::io::AsyncReadExt;
        let longest = 1 << 16;
        let long = format!("{{\"q\":\"{}\"}}\n", "x".repeat(longest));
        let input = format!("{{\"q\":\"a\\ud800\"}}\n{long}{{\"q\":1}}");
        let mut out = Vec::new();
        repaired(
            std::io::Cursor::new(input.into_bytes()),
            longest,
            Default::default(),
        )
        .read_to_end(&mut out)
        .await
        .unwrap();
        let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        assert_eq!(lines[0], br#"{"q":"a\ufffd"}"#);
        assert_eq!(lines[1].len(), long.len() - 1);
        assert_eq!(lines[2], br#"{"q":1}"#);
        assert_eq!(
            lines.len(),
            4,
            "the last line ends with a newline it lacked"
        );
    }

    #[tokio::test]
    async fn a_lone_surrogate_is_repaired_in_a_line_as_long_as_the_server_reads() {
        use tokio::io::AsyncReadExt;
        let text = "\\u65e5".repeat(1 << 16);
        let input = format!("{{\"q\":\"{text}\\ud83d\"}}\n");
        let mut out = Vec::new();
        repaired(
            std::io::Cursor::new(input.clone().into_bytes()),
            input.len(),
            Default::default(),
        )
        .read_to_end(&mut out)
        .await
        .unwrap();
        let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(got["q"].as_str().unwrap().ends_with("日\u{fffd}"));
    }
}
