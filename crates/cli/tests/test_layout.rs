//! Every crate's integration tests are modules of one binary (`tests/all.rs`, with
//! `autotests = false`), so a new file under `tests/` runs only once it is declared there
//! (or given a `[[test]]` target of its own in the crate's Cargo.toml). This test keeps a
//! forgotten file from passing silently by never being compiled.

use std::path::Path;

/// `mod NAME;` lines of an `all.rs`.
fn declared_modules(all_rs: &str) -> Vec<String> {
    all_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_test_file_of_every_crate_is_compiled() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut forgotten = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let tests = dir.join("tests");
        if !tests.is_dir() {
            continue;
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let all = std::fs::read_to_string(tests.join("all.rs")).unwrap_or_default();
        let modules = declared_modules(&all);
        for file in std::fs::read_dir(&tests).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if stem == "all" {
                continue;
            }
            checked += 1;
            let own_target = manifest.contains(&format!("path = \"tests/{name}\""));
            if !modules.iter().any(|m| m == stem) && !own_target {
                forgotten.push(path.display().to_string());
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} test files found under {}",
        crates.display()
    );
    assert!(
        forgotten.is_empty(),
        "test files neither declared in their crate's tests/all.rs nor a [[test]] target: {forgotten:?}"
    );
}

#[test]
fn module_declarations_are_read_from_all_rs() {
    let text = "//! doc\n\nmod common;\nmod crash;\n// mod commented;\nuse x;\n";
    assert_eq!(declared_modules(text), ["common", "crash"]);
}
