//! A single pass over a JSON text that tells the metadata loader, before and after it parses
//! the text, what would otherwise take two Python walks of the parsed document: how deep
//! arrays and objects nest, and whether a number has 19 digits or more (which the fast
//! parser would turn into a float).

/// `(deepest nesting of arrays and objects, longest run of digits)`, both counted outside
/// strings. For malformed text the figures are those of its brackets and digits, still
/// bounded by its length: the caller's parser reports the malformation.
pub fn scan(data: &[u8]) -> (usize, usize) {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut run, mut longest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in data {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'0'..=b'9' => {
                run += 1;
                longest = longest.max(run);
                continue;
            }
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        run = 0;
    }
    (deepest, longest)
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn depth_and_digits() {
        assert_eq!(scan(b"{}"), (1, 0));
        assert_eq!(scan(br#"{"a": [[1, 22]], "b": 333}"#), (3, 3));
        assert_eq!(scan(br#"{"[[[": "1234567890123456789"}"#), (1, 0));
        assert_eq!(scan(br#"["a\"[[", 1234567890123456789]"#), (1, 19));
        assert_eq!(scan(br#"["\\", [2]]"#), (2, 1));
        assert_eq!(scan(b"]]]]"), (0, 0));
        assert_eq!(scan(b"1.5e10"), (0, 2));
    }
}
