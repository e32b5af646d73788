//! A single pass over a JSON text that tells the metadata loader, before and after it parses
//! the text, what would otherwise take two Python walks of the parsed document: how deep
//! arrays and objects nest, and whether a number has 19 digits or more (which the fast
//! parser would turn into a float).

/// What one pass over a JSON text finds: how deep arrays and objects nest, the longest run
/// of digits (both counted outside strings), and where the value of a member of the
/// top-level object begins and ends, when asked for one.
#[derive(Debug, PartialEq, Eq)]
pub struct Scan {
    pub deepest: usize,
    pub longest_digits: usize,
    /// `start..end` of the first value of the top-level member whose name is spelt
    /// exactly as asked (no escapes), whitespace around it included; None when there is
    /// no such member or the text ends before its value does.
    pub member: Option<(usize, usize)>,
}

/// Scan `data` (see [`Scan`]); `member` is the name of the top-level member to locate.
/// For malformed text the figures are those of its brackets, quotes and digits, still
/// bounded by its length: the caller's parser reports the malformation.
pub fn scan(data: &[u8], member: Option<&[u8]>) -> Scan {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut run, mut longest) = (0usize, 0usize);
    // Top-level members: a string at depth 1 where a name may stand is a name; the value
    // of the one asked for runs from its ':' to the next ',' or '}' at depth 1.
    let mut name_may_follow = false;
    let (mut matched, mut value_start, mut found) = (false, None::<usize>, None);
    let mut i = 0;
    while i < data.len() {
        let byte = data[i];
        match byte {
            b'0'..=b'9' => {
                run += 1;
                longest = longest.max(run);
                i += 1;
                continue;
            }
            b' ' | b'\n' | b'\r' | b'\t' => {
                // Indentation is half of a pretty-printed text: skipped in a tight loop,
                // eight spaces at a time where it can.
                i += 1;
                while i + 8 <= data.len()
                    && u64::from_ne_bytes(data[i..i + 8].try_into().unwrap_or([0; 8]))
                        == u64::from_ne_bytes([b' '; 8])
                {
                    i += 8;
                }
                while i < data.len() && matches!(data[i], b' ' | b'\n' | b'\r' | b'\t') {
                    i += 1;
                }
                run = 0;
                continue;
            }
            b'"' => {
                // Strings are skipped a search at a time (most of a metadata text is in
                // them), to the closing quote or past the end of an unterminated one.
                let end = string_end(data, i + 1);
                if depth == 1 && name_may_follow && found.is_none() {
                    name_may_follow = false;
                    matched = end < data.len() && member == Some(&data[i + 1..end]);
                }
                i = end;
            }
            b'[' | b'{' => {
                if depth == 0 && byte == b'{' {
                    name_may_follow = true;
                }
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => {
                if depth == 1 {
                    if let Some(start) = value_start.take() {
                        found = Some((start, i));
                    }
                }
                depth = depth.saturating_sub(1);
            }
            b':' if depth == 1 && matched => {
                matched = false;
                value_start = Some(i + 1);
            }
            b',' if depth == 1 => {
                if let Some(start) = value_start.take() {
                    found = Some((start, i));
                }
                name_may_follow = true;
                matched = false;
            }
            _ => {}
        }
        run = 0;
        i += 1;
    }
    Scan { deepest, longest_digits: longest, member: found }
}

/// Where the string whose text begins at `from` ends: the index of its closing quote, or
/// the text's length when it has none.
fn string_end(data: &[u8], mut from: usize) -> usize {
    while from < data.len() {
        match memchr::memchr2(b'"', b'\\', &data[from..]) {
            None => break,
            Some(k) if data[from + k] == b'"' => return from + k,
            Some(k) => from += k + 2, // an escape and the character it escapes
        }
    }
    data.len()
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn depth_and_digits() {
        let figures = |text: &[u8]| {
            let found = scan(text, None);
            (found.deepest, found.longest_digits)
        };
        assert_eq!(figures(b"{}"), (1, 0));
        assert_eq!(figures(br#"{"a": [[1, 22]], "b": 333}"#), (3, 3));
        assert_eq!(figures(br#"{"[[[": "1234567890123456789"}"#), (1, 0));
        assert_eq!(figures(br#"["a\"[[", 1234567890123456789]"#), (1, 19));
        assert_eq!(figures(br#"["\\", [2]]"#), (2, 1));
        assert_eq!(figures(b"]]]]"), (0, 0));
        assert_eq!(figures(b"1.5e10"), (0, 2));
    }

    #[test]
    fn member_spans() {
        fn span(text: &str) -> Option<&str> {
            scan(text.as_bytes(), Some(b"c")).member.map(|(a, b)| &text[a..b])
        }
        assert_eq!(span(r#"{"a": 1, "c": {"x": [1, {"c": 2}]}, "d": 3}"#),
                   Some(r#" {"x": [1, {"c": 2}]}"#));
        assert_eq!(span(r#"{"c" : null }"#), Some(" null "));
        assert_eq!(span(r#"{"a": "c", "b": {"c": 1}}"#), None); // a value; a nested name
        assert_eq!(span(r#"{"a": ["c", 1], "c": "}"}"#), Some(r#" "}""#));
        assert_eq!(span(r#"{"\u0063": 1}"#), None); // spelt with an escape
        assert_eq!(span(r#"{"c": {"unterminated": 1"#), None);
        assert_eq!(span(r#"["c", {"c": 1}]"#), None); // not an object at the top
        assert_eq!(span(r#"{"c": 1, "c": 2}"#), Some(" 1")); // the first of duplicates
        assert_eq!(scan(br#"{"c": 1}"#, None).member, None);
    }
}
