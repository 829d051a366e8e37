//! The rt-app workloads shipped with feelbench (`workloads/rtapp/`), built
//! into the binary and usable by name (`--probe rtapp:audio-chain`).

/// Every shipped workload: its name, one line on what it is, its file.
pub const SHIPPED: [(&str, &str, &str); 4] = [
    (
        "periodic",
        "one task: 2 ms of work every 10 ms (LISA's periodic 20 % duty cycle)",
        include_str!("../../../workloads/rtapp/periodic.json"),
    ),
    (
        "audio-chain",
        "a JACK-like chain: a 5.333 ms timer wakes the driver, which wakes synth, which wakes mixer",
        include_str!("../../../workloads/rtapp/audio-chain.json"),
    ),
    (
        "compositor",
        "a 60 Hz compositor: the client renders 5 ms and signals; the compositor waits, composes 2 ms, on a 16.667 ms timer",
        include_str!("../../../workloads/rtapp/compositor.json"),
    ),
    (
        "browser-tab",
        "a browser tab: idle frames, a 46 ms click burst, 7 ms scroll frames, a pause; an I/O thread at irregular intervals",
        include_str!("../../../workloads/rtapp/browser-tab.json"),
    ),
];

/// The text of the shipped workload `name`.
pub fn text(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, t)| *t)
}

/// The shipped workloads' names, in order.
pub fn names() -> Vec<&'static str> {
    SHIPPED.iter().map(|(n, _, _)| *n).collect()
}
