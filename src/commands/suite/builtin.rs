//! The suites built into the binary: the files of `suites/`, by name.

/// Every built-in suite: its name and its file's text, `default` first,
/// then the classic tools, then `all`.
pub const BUILT_IN: [(&str, &str); 10] = [
    ("default", include_str!("../../../suites/default.toml")),
    (
        "interbench",
        include_str!("../../../suites/interbench.toml"),
    ),
    ("resp1", include_str!("../../../suites/resp1.toml")),
    ("contest", include_str!("../../../suites/contest.toml")),
    (
        "latencytest",
        include_str!("../../../suites/latencytest.toml"),
    ),
    ("lmbench", include_str!("../../../suites/lmbench.toml")),
    ("irman", include_str!("../../../suites/irman.toml")),
    ("tiobench", include_str!("../../../suites/tiobench.toml")),
    ("game", include_str!("../../../suites/game.toml")),
    ("all", include_str!("../../../suites/all.toml")),
];

/// The text of the built-in suite `name`.
pub fn text(name: &str) -> Option<&'static str> {
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The built-in suites' names, in order.
pub fn names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(n, _)| *n).collect()
}
