//! rt-app's JSON as json-c reads it: C (`/* */`) and `//` comments,
//! trailing commas, keys repeated in one object (kept, in order: two `run`
//! in a phase are two events), and keys without a value (`"suspend",`).
//! Every object entry keeps its 1-based line, for errors and `check`.
//!
//! No crate does this: serde_json and json5 keep one value per key, and
//! the order and repetition of keys is the meaning of an rt-app phase.

/// A value of the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`, or no value at all (a bare key).
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    /// Entries in the file's order, repeated keys kept.
    Object(Vec<Entry>),
}

/// One `"key" : value` of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    /// 1-based line of the key.
    pub line: usize,
    pub value: Value,
}

/// Text that is not JSON even as json-c reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

impl Value {
    /// The number, if this is one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The whole number, if this is one.
    pub fn integer(&self) -> Option<i64> {
        self.number()
            .filter(|n| n.fract() == 0.0 && n.abs() < 1e15)
            .map(|n| n as i64)
    }

    /// What kind of value this is, in words for errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "no value",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "a list",
            Value::Object(_) => "an object",
        }
    }
}

/// Reads `text` as one value followed by nothing but blanks and comments.
pub fn parse(text: &str) -> Result<Value, SyntaxError> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        depth: 0,
    };
    reader.skip_blanks()?;
    let value = reader.value()?;
    reader.skip_blanks()?;
    match reader.peek() {
        None => Ok(value),
        Some(c) => Err(reader.error(format!("{c:?} after the end of the file's value"))),
    }
}

/// How deep objects and lists may nest (rt-app's files nest 5 deep).
const MAX_DEPTH: usize = 64;

/// A cursor over the text that counts lines.
struct Reader {
    chars: Vec<char>,
    at: usize,
    line: usize,
    /// Objects and lists open around the cursor.
    depth: usize,
}

impl Reader {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Skips white space and comments.
    fn skip_blanks(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.peek(), self.chars.get(self.at + 1).copied()) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.line;
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            None => {
                                return Err(SyntaxError {
                                    line: start,
                                    message: "a /* comment that never ends".into(),
                                })
                            }
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            None => Err(self.error("the file ends where a value should be")),
            Some('{' | '[') if self.depth == MAX_DEPTH => Err(self.error(format!(
                "objects and lists nested more than {MAX_DEPTH} deep"
            ))),
            Some('{') => self.nested(Self::object),
            Some('[') => self.nested(Self::array),
            Some('"') => self.string().map(Value::String),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(c) => Err(self.error(format!("{c:?} where a value should be"))),
        }
    }

    /// `read` one level deeper.
    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<Value, SyntaxError>,
    ) -> Result<Value, SyntaxError> {
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        let start = self.line;
        self.bump();
        let mut entries = Vec::new();
        loop {
            self.skip_blanks()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(entries));
                }
                Some('"') => {}
                None => {
                    return Err(SyntaxError {
                        line: start,
                        message: "an object that is never closed with }".into(),
                    })
                }
                Some(c) => return Err(self.error(format!("{c:?} where a quoted key should be"))),
            }
            let line = self.line;
            let key = self.string()?;
            self.skip_blanks()?;
            let value = match self.peek() {
                Some(':') => {
                    self.bump();
                    self.skip_blanks()?;
                    self.value()?
                }
                // A key without a value, as json-c takes it.
                Some(',') | Some('}') => Value::Null,
                _ => return Err(self.error(format!("a : after the key {key:?}"))),
            };
            entries.push(Entry { key, line, value });
            self.skip_blanks()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {}
                None => {
                    return Err(SyntaxError {
                        line: start,
                        message: "an object that is never closed with }".into(),
                    })
                }
                Some(c) => return Err(self.error(format!("{c:?} where , or }} should be"))),
            }
        }
    }

    fn array(&mut self) -> Result<Value, SyntaxError> {
        let start = self.line;
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_blanks()?;
            match self.peek() {
                Some(']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                None => {
                    return Err(SyntaxError {
                        line: start,
                        message: "a list that is never closed with ]".into(),
                    })
                }
                _ => items.push(self.value()?),
            }
            self.skip_blanks()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                Some(c) => return Err(self.error(format!("{c:?} where , or ] should be"))),
                None => {
                    return Err(SyntaxError {
                        line: start,
                        message: "a list that is never closed with ]".into(),
                    })
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.line;
        self.bump();
        let mut text = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err(SyntaxError {
                        line: start,
                        message: "a string that is never closed with \"".into(),
                    })
                }
                Some('"') => return Ok(text),
                Some('\\') => match self.bump() {
                    Some('n') => text.push('\n'),
                    Some('t') => text.push('\t'),
                    Some('r') => text.push('\r'),
                    Some('b') => text.push('\u{8}'),
                    Some('f') => text.push('\u{c}'),
                    Some('u') => text.push(self.unicode_escape()?),
                    Some(c @ ('"' | '\\' | '/')) => text.push(c),
                    Some(c) => return Err(self.error(format!("the escape \\{c} in a string"))),
                    None => return Err(self.error("a string that is never closed with \"")),
                },
                Some(c) => text.push(c),
            }
        }
    }

    /// The character of a `\uXXXX` escape (the `\u` read).
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let digits: String = (0..4).filter_map(|_| self.bump()).collect();
        u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error(format!("\\u{digits} is not a character")))
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let begin = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.bump();
        }
        let text: String = self.chars[begin..self.at].iter().collect();
        text.parse()
            .map(Value::Number)
            .map_err(|_| self.error(format!("{text:?} is not a number")))
    }

    fn word(&mut self) -> Result<Value, SyntaxError> {
        let begin = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.bump();
        }
        let word: String = self.chars[begin..self.at].iter().collect();
        match word.as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "null" => Ok(Value::Null),
            _ => Err(self.error(format!("{word:?} is not a value (quote strings)"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(value: &Value) -> &[Entry] {
        match value {
            Value::Object(entries) => entries,
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn comments_and_trailing_commas_are_read() {
        let text = "{\n /* a\n comment */ \"a\" : 1, // more\n \"b\" : [1, 2,],\n}\n";
        let value = parse(text).unwrap();
        let e = entries(&value);
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].key.as_str(), e[0].line), ("a", 3));
        assert_eq!(
            e[1].value,
            Value::Array(vec![Value::Number(1.0), Value::Number(2.0)])
        );
    }

    #[test]
    fn repeated_keys_stay_in_order_with_their_lines() {
        let value = parse("{\"run\": 1,\n\"sleep\": 2,\n\"run\": 3}").unwrap();
        let got: Vec<_> = entries(&value)
            .iter()
            .map(|e| (e.key.as_str(), e.line, e.value.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("run", 1, Value::Number(1.0)),
                ("sleep", 2, Value::Number(2.0)),
                ("run", 3, Value::Number(3.0)),
            ]
        );
    }

    #[test]
    fn escapes_are_read() {
        let value = parse(r#"["a\"b\u00e9\/\n"]"#).unwrap();
        assert_eq!(value, Value::Array(vec![Value::String("a\"bé/\n".into())]));
        assert!(parse(r#"["\uzz"]"#).is_err());
    }

    #[test]
    fn bare_keys_have_no_value() {
        let value = parse("{ \"suspend\",\n \"run\" : 40,}").unwrap();
        let e = entries(&value);
        assert_eq!(e[0].value, Value::Null);
        assert_eq!(e[1].value, Value::Number(40.0));
    }

    #[test]
    fn errors_say_their_line() {
        let cases = [
            ("{\n\"a\": 1\n\"b\": 2}", 3),
            ("{\n\"a\": tru }", 2),
            ("{\n\"a\": 1,\n", 1),
            ("{ /* open\n\n", 1),
            ("{\"a\": 1} x", 1),
            (&"[".repeat(100_000), 1),
            ("{\n\n\"a\" 1}", 3),
        ];
        for (text, line) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
        }
    }
}
