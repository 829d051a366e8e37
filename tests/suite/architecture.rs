//! The import graph between the top-level modules of `src/` (a module is
//! `src/NAME.rs` or `src/NAME/`; `main` is `src/main.rs`): it has no cycle,
//! and every arrow goes to a strictly lower row of [`LAYERS`] (`main` may
//! import anything). A reference is a path that starts at the crate root:
//! `crate::NAME`, each first name of `use crate::{a, b::c}`, a `super::`
//! chain that climbs to the root, and in `main.rs` a bare `NAME::`.
//!
//! Test code does not count: files named `tests.rs` or `*_tests.rs`,
//! `#[cfg(test)]` items, and the files of a `#[cfg(test)] mod NAME;`. A small
//! tokenizer skips comments (doc comments too), string and char literals,
//! so a path in a doc link or a message is no import.
//!
//! Run it, with the whole graph printed:
//!
//! ```text
//! cargo test --test suite architecture -- --nocapture
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// The layers, top to bottom: a module may import only modules of rows below
/// its own, never one of its row.
const LAYERS: &[&[&str]] = &[
    &["main"],
    &["cli"],
    &["commands"],
    &["exit"],
    &[
        "engine",
        "compare",
        "progress",
        "history",
        "regression",
        "experiment",
    ],
    &["store"],
    &["report", "trace"],
    &["document", "probe", "load"],
    &["sim", "figures"],
    &["measure", "stats"],
    &["system"],
];

/// Modules that render run documents for people (tables, charts, pages,
/// Perfetto traces).
const RENDERERS: &[&str] = &["report", "trace"];

/// Modules that read or reckon with run documents and must never need a
/// renderer, whatever their row: the store, the statistics, and the A/B/n
/// experiments (`experiment`, checked once it exists).
const NEVER_RENDER: &[&str] = &["store", "stats", "experiment"];

/// Where a reference is written: a file relative to the crate, a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    file: String,
    line: usize,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Imports between top-level modules: (from, to) → every place, in file order.
type Graph = BTreeMap<(String, String), Vec<Site>>;

// ---------------------------------------------------------------- tokenizer

/// A token, as far as paths care.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
    /// A string, char or number literal, or a lifetime: never part of a path.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    tok: Tok,
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Walks the characters of a source file, counting lines.
struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Moves past `n` characters (fewer at the end of the text).
    fn advance(&mut self, n: usize) {
        for _ in 0..n {
            match self.peek(0) {
                Some(c) => {
                    self.line += usize::from(c == '\n');
                    self.at += 1;
                }
                None => return,
            }
        }
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek(0).is_some_and(&keep) {
            self.advance(1);
        }
    }

    /// Past a block comment, nested ones included; at its `/*`.
    fn block_comment(&mut self) {
        let mut depth = 0;
        while let Some(c) = self.peek(0) {
            match (c, self.peek(1)) {
                ('/', Some('*')) => {
                    depth += 1;
                    self.advance(2);
                }
                ('*', Some('/')) => {
                    depth -= 1;
                    self.advance(2);
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.advance(1),
            }
        }
    }

    /// Past a string with escapes; at its `"`.
    fn string(&mut self) {
        self.advance(1);
        while let Some(c) = self.peek(0) {
            self.advance(if c == '\\' { 2 } else { 1 });
            if c == '"' {
                return;
            }
        }
    }

    /// Past a raw string when one starts here (after its `r`, at `#` or
    /// `"`); false, having moved nowhere, otherwise.
    fn raw_string(&mut self) -> bool {
        let hashes = (0..).take_while(|&n| self.peek(n) == Some('#')).count();
        if self.peek(hashes) != Some('"') {
            return false;
        }
        self.advance(hashes + 1);
        while self.peek(0).is_some() {
            let closes =
                self.peek(0) == Some('"') && (1..=hashes).all(|n| self.peek(n) == Some('#'));
            if closes {
                self.advance(hashes + 1);
                return true;
            }
            self.advance(1);
        }
        true
    }

    /// Past a char literal (`'x'`, `'\n'`, `'\u{41}'`, `'"'`) or a lifetime
    /// or label (`'a`, `'static`); at its `'`.
    fn char_or_lifetime(&mut self) {
        match (self.peek(1), self.peek(2)) {
            (Some('\\'), _) => {
                // The quote, the backslash and the escaped character, then up
                // to the closing quote (`\u{…}` is longer).
                self.advance(3);
                self.skip_while(|c| c != '\'');
                self.advance(1);
            }
            (Some(_), Some('\'')) => self.advance(3),
            _ => {
                self.advance(1);
                self.skip_while(is_ident_char);
            }
        }
    }

    /// An identifier, or a literal that starts like one (`r"…"`, `r#"…"#`,
    /// `br"…"`, `b"…"`, `c"…"`, `b'x'`); `r#name` is the identifier `name`.
    fn word(&mut self) -> Tok {
        let start = self.at;
        self.skip_while(is_ident_char);
        let word: String = self.chars[start..self.at].iter().collect();
        match (word.as_str(), self.peek(0)) {
            ("r" | "br" | "cr", Some('"' | '#')) if self.raw_string() => Tok::Other,
            ("r", Some('#')) => {
                self.advance(1);
                let start = self.at;
                self.skip_while(is_ident_char);
                Tok::Ident(self.chars[start..self.at].iter().collect())
            }
            ("b" | "c", Some('"')) => {
                self.string();
                Tok::Other
            }
            ("b", Some('\'')) => {
                self.char_or_lifetime();
                Tok::Other
            }
            _ => Tok::Ident(word),
        }
    }
}

/// The tokens of `source`, without comments and whitespace.
fn tokenize(source: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        chars: source.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut tokens = Vec::new();
    while let Some(c) = lexer.peek(0) {
        let line = lexer.line;
        let tok = match (c, lexer.peek(1)) {
            (c, _) if c.is_whitespace() => {
                lexer.advance(1);
                continue;
            }
            ('/', Some('/')) => {
                lexer.skip_while(|c| c != '\n');
                continue;
            }
            ('/', Some('*')) => {
                lexer.block_comment();
                continue;
            }
            (':', Some(':')) => {
                lexer.advance(2);
                Tok::PathSep
            }
            ('"', _) => {
                lexer.string();
                Tok::Other
            }
            ('\'', _) => {
                lexer.char_or_lifetime();
                Tok::Other
            }
            (c, _) if c.is_ascii_digit() => {
                lexer.skip_while(is_ident_char);
                Tok::Other
            }
            (c, _) if is_ident_start(c) => lexer.word(),
            (c, _) => {
                lexer.advance(1);
                Tok::Punct(c)
            }
        };
        tokens.push(Token { tok, line });
    }
    tokens
}

// ------------------------------------------------------------------ scanner

/// What one file says about the crate's modules.
#[derive(Debug, Default, PartialEq)]
struct FileRefs {
    /// Names at the crate root that the file's paths reach, with their lines.
    refs: Vec<(String, usize)>,
    /// Modules (paths from the crate root) declared `#[cfg(test)] mod NAME;`.
    test_modules: Vec<Vec<String>>,
}

/// Reads the paths of one file whose module path from the crate root is
/// `module` (empty for `main.rs`).
fn scan(source: &str, module: &[&str]) -> FileRefs {
    let mut scanner = Scanner {
        tokens: tokenize(source),
        at: 0,
        module: module.iter().map(|m| m.to_string()).collect(),
        inline: Vec::new(),
        depth: 0,
        found: FileRefs::default(),
    };
    scanner.run();
    scanner.found
}

struct Scanner {
    tokens: Vec<Token>,
    at: usize,
    module: Vec<String>,
    /// Inline `mod NAME { … }` blocks open here, with the brace depth inside each.
    inline: Vec<(String, usize)>,
    depth: usize,
    found: FileRefs,
}

impl Scanner {
    fn tok(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.at + ahead).map(|t| &t.tok)
    }

    fn is_ident(&self, ahead: usize, word: &str) -> bool {
        matches!(self.tok(ahead), Some(Tok::Ident(w)) if w == word)
    }

    fn is_punct(&self, ahead: usize, c: char) -> bool {
        self.tok(ahead) == Some(&Tok::Punct(c))
    }

    /// Whether the token `ahead` starts a path (is not after a `::`).
    fn starts_path(&self, ahead: usize) -> bool {
        self.tok(ahead + 1) == Some(&Tok::PathSep)
            && (self.at + ahead == 0 || self.tokens[self.at + ahead - 1].tok != Tok::PathSep)
    }

    /// The module the current token is in: the file's, and inline ones.
    fn here(&self) -> Vec<String> {
        let inline = self.inline.iter().map(|(name, _)| name.clone());
        self.module.iter().cloned().chain(inline).collect()
    }

    fn run(&mut self) {
        while let Some(tok) = self.tok(0).cloned() {
            if self.at_cfg_test() {
                self.skip_test_item();
                continue;
            }
            match tok {
                Tok::Punct('{') => self.depth += 1,
                Tok::Punct('}') => {
                    self.depth = self.depth.saturating_sub(1);
                    let depth = self.depth;
                    self.inline.retain(|&(_, inside)| inside <= depth);
                }
                Tok::Ident(word) if word == "mod" && self.is_punct(2, '{') => {
                    if let Some(Tok::Ident(name)) = self.tok(1) {
                        self.inline.push((name.clone(), self.depth + 1));
                    }
                }
                Tok::Ident(word) if word == "crate" && self.starts_path(0) => {
                    self.at += 2;
                    self.root_path();
                    continue;
                }
                Tok::Ident(word) if word == "super" && self.starts_path(0) => {
                    self.super_path();
                    continue;
                }
                Tok::Ident(_) if self.here().is_empty() && self.starts_path(0) => {
                    self.root_path();
                    continue;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// At a `super::` chain: past it, and past the name it reaches when it
    /// climbs to the crate root; a shorter climb stays in the module.
    fn super_path(&mut self) {
        let mut climbs = 0;
        while self.is_ident(0, "super") && self.tok(1) == Some(&Tok::PathSep) {
            climbs += 1;
            self.at += 2;
        }
        if climbs == self.here().len() {
            self.root_path();
        }
    }

    /// At the name after a path to the crate root: records it, or the first
    /// name of each part of a `{…}` group, and moves past the whole path.
    fn root_path(&mut self) {
        match self.tokens.get(self.at).cloned() {
            Some(Token {
                tok: Tok::Ident(name),
                line,
            }) => {
                self.found.refs.push((name, line));
                self.at += 1;
                self.skip_path_rest();
            }
            Some(Token {
                tok: Tok::Punct('{'),
                ..
            }) => self.root_group(),
            _ => {}
        }
    }

    /// Past the `::b::{c, d}` that may follow a path's first name, so no
    /// later name of it is taken for the start of a path.
    fn skip_path_rest(&mut self) {
        while self.tok(0) == Some(&Tok::PathSep) {
            self.at += 1;
            match self.tok(0) {
                Some(Tok::Punct('{')) => self.skip_group(),
                Some(Tok::Ident(_) | Tok::Punct('*')) => self.at += 1,
                _ => {}
            }
        }
    }

    /// Past a `{a, b::c, d::{e, f}}` group after a path to the crate root,
    /// recording `a`, `b` and `d`.
    fn root_group(&mut self) {
        let mut depth = 0;
        let mut part_starts = true;
        while let Some(Token { tok, line }) = self.tokens.get(self.at).cloned() {
            self.at += 1;
            match &tok {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                Tok::Ident(name) if depth == 1 && part_starts && name != "self" => {
                    self.found.refs.push((name.clone(), line));
                }
                _ => {}
            }
            // A part starts after the group's `{` and after each of its commas.
            part_starts = depth == 1 && matches!(tok, Tok::Punct(',' | '{'));
        }
    }

    /// Whether `#[cfg(test)]` starts here.
    fn at_cfg_test(&self) -> bool {
        let ident = |w: &str| Tok::Ident(w.to_string());
        let pattern = [
            Tok::Punct('#'),
            Tok::Punct('['),
            ident("cfg"),
            Tok::Punct('('),
            ident("test"),
            Tok::Punct(')'),
            Tok::Punct(']'),
        ];
        pattern
            .iter()
            .enumerate()
            .all(|(ahead, tok)| self.tok(ahead) == Some(tok))
    }

    /// Past a `#[cfg(test)]` item: its other attributes, then up to its `;`
    /// or through its `{…}` body. Records `mod NAME;` as test code.
    fn skip_test_item(&mut self) {
        self.at += 7;
        while self.is_punct(0, '#') && self.is_punct(1, '[') {
            self.at += 1;
            self.skip_group();
        }
        self.record_test_module();
        let mut nesting = 0usize;
        while let Some(tok) = self.tok(0).cloned() {
            match tok {
                Tok::Punct('(' | '[') => nesting += 1,
                Tok::Punct(')' | ']') => nesting = nesting.saturating_sub(1),
                Tok::Punct(';') if nesting == 0 => {
                    self.at += 1;
                    return;
                }
                Tok::Punct('{') if nesting == 0 => {
                    self.skip_group();
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Records `[pub[(…)]] mod NAME;` starting here as a test module.
    fn record_test_module(&mut self) {
        let mut ahead = 0;
        if self.is_ident(0, "pub") {
            ahead = 1;
            if self.is_punct(1, '(') {
                ahead = 3;
                while self.tok(ahead - 1).is_some() && !self.is_punct(ahead - 1, ')') {
                    ahead += 1;
                }
            }
        }
        if let (true, Some(Tok::Ident(name)), true) = (
            self.is_ident(ahead, "mod"),
            self.tok(ahead + 1),
            self.is_punct(ahead + 2, ';'),
        ) {
            let mut path = self.here();
            path.push(name.clone());
            self.found.test_modules.push(path);
        }
    }

    /// Past the balanced `(…)`, `[…]` or `{…}` group opening here.
    fn skip_group(&mut self) {
        let mut depth = 0usize;
        while let Some(tok) = self.tok(0).cloned() {
            self.at += 1;
            match tok {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

// -------------------------------------------------------------------- crate

/// The crate as the checks see it.
struct Crate {
    /// Top-level modules, `main` included.
    modules: BTreeSet<String>,
    graph: Graph,
}

/// Scans every `.rs` file under `src/` of this crate.
fn scan_crate() -> Crate {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(root.join("src")).ok())
        .filter_map(|f| f.components().next())
        .map(|first| {
            first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    let scanned: Vec<(String, Vec<String>, FileRefs)> = files
        .iter()
        .filter(|f| !is_test_file(f))
        .map(|file| {
            let relative = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let module = module_path(file.strip_prefix(root.join("src")).unwrap());
            let source = std::fs::read_to_string(file).unwrap();
            let found = scan(
                &source,
                &module.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            (relative, module, found)
        })
        .collect();
    let test_modules: Vec<&Vec<String>> = scanned
        .iter()
        .flat_map(|(_, _, f)| &f.test_modules)
        .collect();
    let mut graph = Graph::new();
    for (file, module, found) in &scanned {
        if test_modules.iter().any(|t| module.starts_with(t)) {
            continue;
        }
        let from = module.first().map_or("main", String::as_str);
        for (name, line) in &found.refs {
            // A crate-root name that is not a module is an item of main.rs.
            let to = if modules.contains(name) { name } else { "main" };
            if from != to {
                graph
                    .entry((from.to_string(), to.to_string()))
                    .or_default()
                    .push(Site {
                        file: file.clone(),
                        line: *line,
                    });
            }
        }
    }
    Crate { modules, graph }
}

/// Appends every `.rs` file below `dir` to `files`.
fn rust_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// `tests.rs` and `*_tests.rs`: test modules by name.
fn is_test_file(file: &Path) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy();
    stem == "tests" || stem.ends_with("_tests")
}

/// The module path of a file below `src/`: `a/b.rs` and `a/b/mod.rs` are
/// `[a, b]`, `main.rs` is `[]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") || path == ["main"] {
        path.pop();
    }
    path
}

// ------------------------------------------------------------------- checks

/// The row of [`LAYERS`] that names `module`.
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

/// Every edge that does not go to a strictly lower layer (`main` may import
/// anything), as `from -> to (file:line)` and a line of its other places.
fn layering_violations(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .filter(|((from, to), _)| {
            from != "main"
                && match (layer_of(from), layer_of(to)) {
                    (Some(from), Some(to)) => to <= from,
                    _ => true,
                }
        })
        .map(|((from, to), sites)| {
            let mut text = format!("{from} -> {to} ({})", sites[0]);
            if sites.len() > 1 {
                let others: Vec<String> = sites[1..].iter().map(Site::to_string).collect();
                text += &format!("\n    also {}", others.join(", "));
            }
            text
        })
        .collect()
}

/// Every edge from a module of [`NEVER_RENDER`] to one of [`RENDERERS`], as
/// `from -> to (file:line)`.
fn renderer_imports(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .filter(|((from, to), _)| {
            NEVER_RENDER.contains(&from.as_str()) && RENDERERS.contains(&to.as_str())
        })
        .map(|((from, to), sites)| format!("{from} -> {to} ({})", sites[0]))
        .collect()
}

/// A shortest cycle through each module that lies on one, each cycle once,
/// as `a -> b (file:line) -> a (file:line)`.
fn cycles(graph: &Graph) -> Vec<String> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in graph.keys() {
        next.entry(from).or_default().push(to);
    }
    let mut found = BTreeSet::new();
    for &start in next.keys() {
        if let Some(mut cycle) = shortest_cycle(&next, start) {
            let smallest = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap();
            cycle.rotate_left(smallest);
            found.insert(cycle);
        }
    }
    found
        .into_iter()
        .map(|cycle| {
            let mut text = cycle[0].to_string();
            for (i, from) in cycle.iter().enumerate() {
                let to = cycle[(i + 1) % cycle.len()];
                let site = &graph[&(from.to_string(), to.to_string())][0];
                text += &format!(" -> {to} ({site})");
            }
            text
        })
        .collect()
}

/// The modules of a shortest path from `start` back to itself, `start` first.
fn shortest_cycle<'a>(
    next: &BTreeMap<&'a str, Vec<&'a str>>,
    start: &'a str,
) -> Option<Vec<&'a str>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(module) = queue.pop_front() {
        for &to in next.get(module).into_iter().flatten() {
            if to == start {
                let mut cycle = vec![module];
                while let Some(&before) = came_from.get(cycle.last().unwrap()) {
                    cycle.push(before);
                }
                cycle.reverse();
                return Some(cycle);
            }
            if !came_from.contains_key(to) {
                came_from.insert(to, module);
                queue.push_back(to);
            }
        }
    }
    None
}

/// The graph, one edge a line with its count of references and first place.
fn describe(graph: &Graph) -> String {
    let mut text = format!("import graph of src/ ({} edges):\n", graph.len());
    for ((from, to), sites) in graph {
        text += &format!("  {from} -> {to}: {} ({})\n", sites.len(), sites[0]);
    }
    text
}

// -------------------------------------------------------------------- tests

#[test]
fn every_top_level_module_has_one_layer() {
    let placed: Vec<&str> = LAYERS.iter().flat_map(|row| row.iter().copied()).collect();
    let unique: BTreeSet<&str> = placed.iter().copied().collect();
    assert_eq!(
        unique.len(),
        placed.len(),
        "a module is in two rows: {placed:?}"
    );
    let modules = scan_crate().modules;
    let unplaced: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "give these modules a row of LAYERS in tests/suite/architecture.rs: {unplaced:?}"
    );
}

#[test]
fn the_scan_sees_main_use_the_modules_below_it() {
    let graph = scan_crate().graph;
    for to in ["cli", "commands"] {
        assert!(
            graph.contains_key(&("main".to_string(), to.to_string())),
            "main -> {to} not found: the scan misses imports\n{}",
            describe(&graph)
        );
    }
}

#[test]
fn the_import_graph_has_no_cycle() {
    let cycles = cycles(&scan_crate().graph);
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn every_import_goes_down_the_layers() {
    let graph = scan_crate().graph;
    println!("{}", describe(&graph));
    let violations = layering_violations(&graph);
    assert!(
        violations.is_empty(),
        "imports that do not go to a lower layer (see LAYERS in tests/suite/architecture.rs):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_store_the_statistics_and_experiments_import_no_renderer() {
    let imports = renderer_imports(&scan_crate().graph);
    assert!(
        imports.is_empty(),
        "these read run documents through `document`, never a renderer:\n{}",
        imports.join("\n")
    );
}

/// The names at the crate root that `source` reaches from `module`.
fn refs(source: &str, module: &[&str]) -> Vec<(String, usize)> {
    scan(source, module).refs
}

fn names(source: &str, module: &[&str]) -> Vec<String> {
    refs(source, module)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn crate_paths_and_groups_across_lines_are_found_with_their_lines() {
    let source = "use crate::a::X;\nuse crate::{\n    b,\n    c::{d, e},\n    self,\n};\nfn f() { crate::f::g(); $crate::h!(); }\n";
    assert_eq!(
        refs(source, &["m"]),
        [("a", 1), ("b", 3), ("c", 4), ("f", 7), ("h", 7)].map(|(n, l)| (n.to_string(), l))
    );
}

#[test]
fn comments_and_doc_comments_are_no_imports() {
    let source = "// crate::a\n/// [`crate::b`]\n//! crate::c\n/* crate::d /* crate::e */ crate::f */\n/** crate::g */ use crate::h;";
    assert_eq!(refs(source, &["m"]), [("h".to_string(), 5)]);
}

#[test]
fn string_literals_are_no_imports() {
    let source = r####"
        let a = "crate::a \" crate::b";
        let b = r#"crate::c " crate::d"#;
        let c = br##"crate::e"# crate::f"##;
        let d = b"crate::g\\"; let e = c"crate::h";
        let f = r"\"; use crate::i;
    "####;
    assert_eq!(names(source, &["m"]), ["i"]);
}

#[test]
fn char_literals_and_lifetimes_are_told_apart() {
    let source = "fn f<'a>(x: &'a str) -> char { let q = '\"'; let e = '\\''; let u = '\\u{22}'; let b = b'\"'; 'outer: loop { break 'outer; } '{' }\nuse crate::a; fn g(_: &'static str) { crate::b::c() }";
    assert_eq!(names(source, &["m"]), ["a", "b"]);
}

#[test]
fn raw_identifiers_and_numbers_are_read_as_such() {
    assert_eq!(names("let r#type = 1.5e3; crate::r#a::b();", &["m"]), ["a"]);
}

#[test]
fn pub_crate_and_paths_through_other_crates_are_no_imports() {
    assert_eq!(
        names("pub(crate) fn f() { std::crate_x::y(); }", &["m"]),
        Vec::<String>::new()
    );
}

#[test]
fn super_leaves_the_module_only_when_it_climbs_to_the_root() {
    let source = "use super::a; use super::super::b; use super::{c, d};";
    assert_eq!(names(source, &["m", "child"]), ["b"]);
    assert_eq!(names(source, &["m"]), ["a", "c", "d"]);
    assert_eq!(names("mod inner { use super::super::e; }", &["m"]), ["e"]);
}

#[test]
fn main_reaches_modules_by_bare_paths() {
    let source = "mod cli;\nuse cli::{Cli, run::Args};\nfn main() { commands::run::run(); }";
    assert_eq!(names(source, &[]), ["cli", "commands"]);
    assert_eq!(names("use cli::Cli;", &["m"]), Vec::<String>::new());
}

#[test]
fn cfg_test_items_are_skipped_and_test_modules_recorded() {
    let source = "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n#[cfg(test)]\n#[allow(unused)]\npub(crate) mod fixture;\n#[cfg(test)]\nuse crate::b;\n#[cfg(test)]\nfn helper() -> [u8; 2] { crate::c::d() }\n#[cfg(not(test))]\nuse crate::e;\nuse crate::f;";
    let found = scan(source, &["m"]);
    assert_eq!(found.refs, [("e".to_string(), 13), ("f".to_string(), 14)]);
    assert_eq!(
        found.test_modules,
        [vec!["m".to_string(), "fixture".to_string()]]
    );
}

#[test]
fn module_paths_follow_the_file_layout() {
    assert_eq!(module_path(Path::new("main.rs")), Vec::<String>::new());
    assert_eq!(module_path(Path::new("engine/main.rs")), ["engine", "main"]);
    assert_eq!(module_path(Path::new("cli.rs")), ["cli"]);
    assert_eq!(module_path(Path::new("report/mod.rs")), ["report"]);
    assert_eq!(
        module_path(Path::new("document/merge/runs.rs")),
        ["document", "merge", "runs"]
    );
    assert!(is_test_file(Path::new("system/environment_tests.rs")));
    assert!(!is_test_file(Path::new("system/tests_data.rs")));
}

/// A graph of `from -> to` edges, each written at `from.rs:1`.
fn graph_of(edges: &[(&str, &str)]) -> Graph {
    edges
        .iter()
        .map(|&(from, to)| {
            let site = Site {
                file: format!("{from}.rs"),
                line: 1,
            };
            ((from.to_string(), to.to_string()), vec![site])
        })
        .collect()
}

#[test]
fn upward_same_row_and_unplaced_edges_are_violations() {
    let graph = graph_of(&[
        ("main", "system"),
        ("cli", "commands"),
        ("system", "measure"),
        ("engine", "compare"),
        ("report", "unknown"),
    ]);
    assert_eq!(
        layering_violations(&graph),
        [
            "engine -> compare (engine.rs:1)",
            "report -> unknown (report.rs:1)",
            "system -> measure (system.rs:1)",
        ]
    );
}

#[test]
fn a_renderer_imported_by_the_store_stats_or_an_experiment_is_found() {
    let graph = graph_of(&[
        ("store", "report"),
        ("experiment", "report"),
        ("stats", "document"),
        ("compare", "report"),
        ("store", "document"),
    ]);
    assert_eq!(
        renderer_imports(&graph),
        [
            "experiment -> report (experiment.rs:1)",
            "store -> report (store.rs:1)",
        ]
    );
}

#[test]
fn cycles_are_found_once_each_with_their_places() {
    let graph = graph_of(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
        ("e", "f"),
    ]);
    assert_eq!(
        cycles(&graph),
        [
            "a -> b (a.rs:1) -> c (b.rs:1) -> a (c.rs:1)",
            "d -> e (d.rs:1) -> d (e.rs:1)",
        ]
    );
    assert!(cycles(&graph_of(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}
