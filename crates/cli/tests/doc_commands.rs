//! Every `$ bufcache ...` example in README.md and docs/ is run against the built binary and
//! its output compared with what the docs show, so that the docs cannot drift from the
//! code again (issue 18).
//!
//! What is compared, line by line (runs of spaces count as one, so column widths may vary):
//! the number of lines, every word (headers, column names, policy names, units), and every
//! number, except
//! - numbers followed by the unit `s` (wall-clock seconds: `2.21 s of replay in total`),
//!   the numbers of lines about memory use ([`MACHINE_LINES`]), and the JSON values of
//!   [`TIMING_KEYS`];
//! - every number of the commands in [`MEASURED`] (benchmarks: all their numbers are
//!   timings of this machine), whose *shape* alone is compared: a number where the docs
//!   have a number.
//!
//! JSON lines are compared as JSON: the same keys in the same nesting, and the same values
//! where they are not timings.
//!
//! Examples the test does not run are named, with the reason, in [`SKIPPED`] (they need
//! something a clean clone or an unprivileged user lacks) or marked in the docs with an HTML
//! comment `<!-- doc-test: not run: REASON -->` on a line before their code block (long runs).
//! Examples reading the public traces in `../shared/traces/` (README, "Prerequisites") run
//! in the `#[ignore]`d test below, which fails when the traces are absent.
//!
//! Commands of one document run in order in one scratch directory (a later example may read
//! what an earlier one wrote), which holds links to the repository's `scenarios/`, `tests/`
//! and `docs/` (`docs/examples/` holds small inputs the docs use), and sits one level below a link `shared` to the checkout's `../shared`, so that
//! the documented relative paths resolve as they do from the repository root.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Documented commands this test never runs, and why. Each must still match an example
/// (checked), so the list cannot outlive the docs.
const SKIPPED: &[(&str, &str)] = &[
    (
        "bufcache load ",
        "needs a `bufcache serve` listening on 127.0.0.1:8080 (serve_cli.rs checks its output shape)",
    ),
    (
        "bufcache make-files ",
        "writes /tmp/f, a fixed path shared by everyone on the machine (serve_cli.rs checks its output shape)",
    ),
];

/// Commands whose numbers all measure this machine's speed: only their shape is compared.
const MEASURED: &[&str] = &["bufcache bench "];

/// Lines whose numbers all depend on the machine (memory use): only their shape is compared.
const MACHINE_LINES: &[&str] = &["peak resident memory"];

/// JSON keys whose values are wall-clock timings.
const TIMING_KEYS: &[&str] = &["seconds", "wall_s"];

/// Where the public traces are expected (README, "Prerequisites").
const SHARED_TRACES: &str = "../shared/traces/";

/// The marker that keeps a (long) example out of the run.
const NOT_RUN_MARKER: &str = "<!-- doc-test: not run:";

/// The marker that adds arguments to the next block's commands to make them short (only for
/// [`MEASURED`] commands, whose numbers are not compared anyway).
const SHORTEN_MARKER: &str = "<!-- doc-test: shorten with:";

/// One `$ bufcache ...` line of a document and the output shown under it.
#[derive(Debug, Clone)]
struct Example {
    file: String,
    line: usize,
    command: String,
    expected: Vec<String>,
    not_run: Option<String>,
    /// Arguments the test adds to make the run short.
    shorten: Option<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, then docs/*.md and docs/experiments/*.md, in name order.
fn documents(root: &Path) -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    for dir in ["docs", "docs/experiments"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .expect("docs directory")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        files.extend(names);
    }
    files
}

/// "N replacement policies" in any document must be the registry's count, so adding a
/// policy without saying so in the README and the architecture map fails here.
#[test]
fn documented_policy_counts_are_the_registrys() {
    let root = repo_root();
    let phrase = " replacement policies";
    let mut seen = 0;
    for file in documents(&root) {
        let text = std::fs::read_to_string(root.join(&file)).expect("readable document");
        for (at, _) in text.match_indices(phrase) {
            let before = &text[..at];
            let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                continue;
            }
            let count: usize = before[before.len() - digits..].parse().expect("a count");
            assert_eq!(
                count,
                policy::POLICIES.len(),
                "{file} says {count}{phrase}; `bufcache policies` lists {}",
                policy::POLICIES.len()
            );
            seen += 1;
        }
    }
    assert!(
        seen >= 2,
        "the README and docs/ARCHITECTURE.md state the count"
    );
}

/// The examples of one document: inside a code block, a line starting with `$ bufcache`
/// and the lines under it up to the next `$ ` line or the end of the block.
fn examples_in(file: &str, text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut in_block = false;
    let mut marker: Option<String> = None;
    let mut shorten: Option<String> = None;
    let mut current: Option<Example> = None;
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            if in_block {
                found.extend(current.take());
                marker = None;
                shorten = None;
            }
            in_block = !in_block;
            continue;
        }
        if !in_block {
            if let Some(rest) = line.trim().strip_prefix(NOT_RUN_MARKER) {
                let reason = rest.trim_end_matches("-->").trim();
                assert!(
                    !reason.is_empty(),
                    "{file}:{}: a not-run marker needs a reason",
                    index + 1
                );
                marker = Some(reason.to_string());
            }
            if let Some(rest) = line.trim().strip_prefix(SHORTEN_MARKER) {
                shorten = Some(rest.trim_end_matches("-->").trim().to_string());
            }
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            found.extend(current.take());
            if command.starts_with("bufcache") {
                current = Some(Example {
                    file: file.to_string(),
                    line: index + 1,
                    command: command.to_string(),
                    expected: Vec::new(),
                    not_run: marker.clone(),
                    shorten: shorten.clone(),
                });
            }
        } else if let Some(example) = current.as_mut() {
            example.expected.push(line.to_string());
        }
    }
    found
}

fn all_examples() -> Vec<Example> {
    let root = repo_root();
    documents(&root)
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(root.join(file)).expect("document");
            examples_in(file, &text)
        })
        .collect()
}

fn skip_reason(example: &Example) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(prefix, _)| example.command.starts_with(prefix))
        .map(|(_, reason)| *reason)
}

/// Splits a command line as a POSIX shell would for the quoting the docs use (single and
/// double quotes, no escapes or variables), and a trailing `| head -N`.
fn split_command(command: &str) -> (Vec<String>, Option<usize>) {
    let (command, head) = match command.split_once(" | ") {
        Some((left, pipe)) => {
            let lines = pipe
                .strip_prefix("head -")
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("only `| head -N` is supported after a command: {pipe}"));
            (left, Some(lines))
        }
        None => (command, None),
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "unbalanced quote in {command}");
    if in_word {
        words.push(word);
    }
    (words, head)
}

/// A scratch tree laid out like the checkout's neighbourhood: `run/` is the working directory
/// with `scenarios`, `tests` and `docs` linked from the repository; `shared` links `../shared`.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let root = repo_root().canonicalize().expect("repository root");
    let dir = tempfile::tempdir().expect("scratch directory");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("run directory");
    for name in ["scenarios", "tests", "docs"] {
        std::os::unix::fs::symlink(root.join(name), run.join(name)).expect("link");
    }
    if let Some(parent) = root.parent() {
        std::os::unix::fs::symlink(parent.join("shared"), dir.path().join("shared")).expect("link");
    }
    (dir, run)
}

/// Runs one example as a user would see it: standard output, then standard error.
fn run(example: &Example, cwd: &Path) -> (bool, Vec<String>) {
    let (mut words, head) = split_command(&example.command);
    if let Some(extra) = &example.shorten {
        assert!(
            MEASURED.iter().any(|p| example.command.starts_with(p)),
            "{}:{}: only measured commands may be shortened (their numbers are not compared)",
            example.file,
            example.line
        );
        words.extend(split_command(extra).0);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .args(&words[1..])
        .current_dir(cwd)
        .output()
        .expect("the binary runs");
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(n) = head {
        lines.truncate(n);
    } else {
        lines.extend(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .map(str::to_string),
        );
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    (out.status.success(), lines)
}

/// The number in a word, if it is one: `1,234`, `0.5911*`, `(4,176)`, `23.58%`.
fn number(word: &str) -> Option<f64> {
    let core = word
        .trim_start_matches('(')
        .trim_end_matches([')', ',', ';', ':', '*', '%']);
    let digits: String = core.chars().filter(|&c| c != ',').collect();
    if digits.chars().any(|c| c.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// A line as the words to compare: numbers that are timings (or, for measured commands,
/// every number) become `#`.
fn comparable(line: &str, measured: bool) -> Vec<String> {
    let measured = measured || MACHINE_LINES.iter().any(|m| line.contains(m));
    let words: Vec<&str> = line.split_whitespace().collect();
    (0..words.len())
        .map(|i| {
            let timing = words
                .get(i + 1)
                .is_some_and(|next| next.trim_end_matches(',') == "s");
            if number(words[i]).is_some() && (measured || timing) {
                "#".to_string()
            } else {
                words[i].to_string()
            }
        })
        .collect()
}

/// The difference between two JSON values, if any, naming the path where they differ.
fn json_difference(
    path: &str,
    want: &serde_json::Value,
    got: &serde_json::Value,
    measured: bool,
) -> Option<String> {
    use serde_json::Value;
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let wk: Vec<&String> = w.keys().collect();
            let gk: Vec<&String> = g.keys().collect();
            if wk != gk {
                return Some(format!("{path}: keys {wk:?} in the docs, {gk:?} printed"));
            }
            w.iter().find_map(|(k, wv)| {
                let timing = measured || TIMING_KEYS.contains(&k.as_str());
                json_difference(&format!("{path}.{k}"), wv, &g[k], timing)
            })
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            w.iter().zip(g).enumerate().find_map(|(i, (wv, gv))| {
                json_difference(&format!("{path}[{i}]"), wv, gv, measured)
            })
        }
        (Value::Number(_), Value::Number(_)) if measured => None,
        (w, g) if w == g => None,
        (w, g) => Some(format!("{path}: {w} in the docs, {g} printed")),
    }
}

/// Compares an example's output with the docs; `None` when they agree.
fn difference(example: &Example, success: bool, got: &[String]) -> Option<String> {
    let mut expected: &[String] = &example.expected;
    while expected.last().is_some_and(|l| l.trim().is_empty()) {
        expected = &expected[..expected.len() - 1];
    }
    let measured = MEASURED.iter().any(|p| example.command.starts_with(p));
    let wants_error = expected.first().is_some_and(|l| l.starts_with("error:"));
    if success == wants_error {
        return Some(format!(
            "exit status: success {success}, the docs show {}",
            if wants_error { "an error" } else { "success" }
        ));
    }
    if expected.len() != got.len() {
        return Some(format!(
            "{} lines in the docs, {} printed",
            expected.len(),
            got.len()
        ));
    }
    for (i, (want, line)) in expected.iter().zip(got).enumerate() {
        let found = if want.starts_with('{') {
            match (serde_json::from_str(want), serde_json::from_str(line)) {
                (Ok(w), Ok(g)) => json_difference("", &w, &g, measured),
                _ => Some("not JSON on both sides".to_string()),
            }
        } else if comparable(want, measured) != comparable(line, measured) {
            Some(format!("docs:    {want}\n      printed: {line}"))
        } else {
            None
        };
        if let Some(found) = found {
            return Some(format!("line {}: {found}", i + 1));
        }
    }
    None
}

/// Runs the chosen examples, each document's in order in its own scratch directory, and
/// fails listing every example whose output differs, with what it printed.
fn check(examples: &[Example]) {
    let mut failures = Vec::new();
    let mut files: Vec<&str> = examples.iter().map(|e| e.file.as_str()).collect();
    files.dedup();
    for file in files {
        let (_dir, cwd) = scratch();
        for example in examples.iter().filter(|e| e.file == file) {
            let (success, got) = run(example, &cwd);
            if let Some(found) = difference(example, success, &got) {
                failures.push(format!(
                    "{}:{} `{}`\n  {found}\n  it printed:\n{}",
                    example.file,
                    example.line,
                    example.command,
                    got.join("\n")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} documented command(s) disagree with the docs:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "long in a debug build (minutes of replay and experiments; under 30 s in release, which CI runs): cargo test --release -p bufcache-cli --test all doc_commands::"
)]
fn documented_commands_print_what_the_docs_show() {
    let examples = all_examples();
    assert!(
        examples.len() >= 30,
        "only {} examples found: is the parser broken?",
        examples.len()
    );
    for (prefix, _) in SKIPPED {
        assert!(
            examples.iter().any(|e| e.command.starts_with(prefix)),
            "skipped `{prefix}` matches no documented command: remove it from SKIPPED"
        );
    }
    let chosen: Vec<Example> = examples
        .into_iter()
        .filter(|e| {
            e.not_run.is_none() && skip_reason(e).is_none() && !e.command.contains(SHARED_TRACES)
        })
        .collect();
    check(&chosen);
}

#[test]
#[ignore = "needs the public traces in ../shared/traces (README, Prerequisites)"]
fn documented_commands_on_the_public_traces_print_what_the_docs_show() {
    let traces = repo_root().join(SHARED_TRACES);
    assert!(
        traces.is_dir(),
        "{} is missing: see README, Prerequisites",
        traces.display()
    );
    let chosen: Vec<Example> = all_examples()
        .into_iter()
        .filter(|e| {
            e.not_run.is_none() && skip_reason(e).is_none() && e.command.contains(SHARED_TRACES)
        })
        .collect();
    assert!(
        !chosen.is_empty(),
        "no documented command reads {SHARED_TRACES}"
    );
    check(&chosen);
}

#[test]
fn the_parser_reads_examples_outputs_markers_and_quotes() {
    let doc = "text\n<!-- doc-test: not run: long -->\n```\n$ bufcache a\nout 1\n\n$ bufcache b 'x y' \"z\"\n```\n<!-- doc-test: shorten with: --n 5 -->\n```\n$ ls\nno\n$ bufcache c | head -2\n```\n";
    let found = examples_in("d.md", doc);
    let summary: Vec<_> = found
        .iter()
        .map(|e| {
            (
                e.line,
                e.command.as_str(),
                e.expected.len(),
                e.not_run.as_deref(),
                e.shorten.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (4, "bufcache a", 2, Some("long"), None),
            (7, "bufcache b 'x y' \"z\"", 0, Some("long"), None),
            (13, "bufcache c | head -2", 0, None, Some("--n 5")),
        ]
    );
    assert_eq!(
        split_command("bufcache b 'x y' \"z\"").0,
        vec!["bufcache", "b", "x y", "z"]
    );
    assert_eq!(
        split_command("bufcache c | head -2"),
        (vec!["bufcache".to_string(), "c".to_string()], Some(2))
    );
}

#[test]
fn timings_and_measured_numbers_are_masked_and_the_rest_compared() {
    assert_eq!(
        comparable("32 runs, 2.21 s of replay", false),
        vec!["32", "runs,", "#", "s", "of", "replay"]
    );
    assert_eq!(
        comparable("lru  0.5911*  (4,176)", true),
        vec!["lru", "#", "#"]
    );
    let example = Example {
        file: "d.md".into(),
        line: 1,
        command: "bufcache x".into(),
        expected: vec!["lru 0.5911".into(), "{\"a\":1,\"wall_s\":0.5}".into()],
        not_run: None,
        shorten: None,
    };
    let same = [
        "lru   0.5911".to_string(),
        "{\"a\":1,\"wall_s\":0.7}".to_string(),
    ];
    assert_eq!(difference(&example, true, &same), None);
    let other_ratio = ["lru 0.5912".to_string(), same[1].clone()];
    assert!(difference(&example, true, &other_ratio).is_some());
    let other_key = [same[0].clone(), "{\"b\":1,\"wall_s\":0.7}".to_string()];
    assert!(difference(&example, true, &other_key).is_some());
    assert!(
        difference(&example, false, &same).is_some(),
        "a failure where the docs show success"
    );
    assert!(
        difference(&example, true, &same[..1]).is_some(),
        "a missing line"
    );
}
