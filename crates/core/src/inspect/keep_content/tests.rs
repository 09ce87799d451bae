use super::*;
use crate::inspect::test_support::{self, write};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use pretty_assertions::assert_eq;
use std::path::Path;

const CONFIG: &str = "{\n  \"name\": \"webapp\",\n  \"debug\": true,\n  \"port\": 8080,\n  \"database\": {\n    \"host\": \"localhost\",\n    \"pool\": 5\n  }\n}\n";

fn start(cwd: &Path) -> TurnStart<'_> {
    test_support::start("change it", cwd)
}

/// The content written instead and the note, for a plan that keeps the file.
fn kept(plan: Plan) -> (String, String) {
    match plan {
        Plan::Keep { content, note } => (content, note),
        other => panic!("expected a kept write, got {other:?}"),
    }
}

fn refused(plan: Plan) -> String {
    match plan {
        Plan::Refuse(message) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_json_object_with_only_the_keys_to_set_gets_the_whole_object_back_with_them_set() {
    let (content, note) = kept(plan(
        "config.json",
        CONFIG,
        "{\"debug\": false, \"retries\": 3}",
    ));
    assert!(
        note.starts_with(
            "Your content left out `database`, `name` and `port`, which config.json has"
        ),
        "{note}"
    );
    // The other keys keep their order, values and the file's indentation; the new key is last.
    assert_eq!(
        content,
        "{\n  \"name\": \"webapp\",\n  \"debug\": false,\n  \"port\": 8080,\n  \"database\": {\n    \"host\": \"localhost\",\n    \"pool\": 5\n  },\n  \"retries\": 3\n}\n"
    );
    // A nested object written partly is merged key by key.
    let (content, note) = kept(plan(
        "config.json",
        CONFIG,
        "{\"database\": {\"pool\": 10}}",
    ));
    assert!(note.contains("`database.host`"), "{note}");
    assert!(
        content.contains("\"database\": {\n    \"host\": \"localhost\",\n    \"pool\": 10\n  }"),
        "{content}"
    );
    assert!(keeps_everything(CONFIG, &content));
}

#[test]
fn a_json_write_that_keeps_every_key_goes_through_however_it_is_formatted() {
    let compact = "{\"name\": \"webapp\", \"debug\": false, \"port\": 8080, \"database\": {\"host\": \"db\", \"pool\": 5}, \"retries\": 3}";
    assert_eq!(plan("config.json", CONFIG, compact), Plan::AsGiven);
    assert!(keeps_everything(CONFIG, compact));
    assert!(!keeps_everything(CONFIG, "{\"debug\": false}"));
}

#[test]
fn code_written_without_the_file_it_joins_gets_the_file_with_it_added() {
    let old = "def shout(text):\n    return text.upper() + '!'\n";
    let new = "def slugify(text):\n    return text.lower().replace(' ', '-')";
    let (content, note) = kept(plan("text_utils.py", old, new));
    assert!(
        note.starts_with("Your content did not have `shout`, which text_utils.py defines"),
        "{note}"
    );
    assert!(keeps_everything(old, &content));
    assert_eq!(
        content,
        "def shout(text):\n    return text.upper() + '!'\n\ndef slugify(text):\n    return text.lower().replace(' ', '-')\n"
    );
}

#[test]
fn a_rewrite_that_keeps_the_definitions_goes_through() {
    let old = "def average(xs):\n    total = sum(xs)\n    return total / len(xs)\n";
    let fixed = "def average(xs):\n    return sum(xs) // len(xs)\n";
    assert_eq!(plan("stats.py", old, fixed), Plan::AsGiven);
    // Most lines kept, one function dropped: the model changed part of the file on purpose.
    let old = "def a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    return 3\n";
    let new = "def a():\n    return 1\n\ndef b():\n    return 2\n";
    assert_eq!(plan("m.py", old, new), Plan::AsGiven);
    // A file that defines nothing (notes, a script of commands) is never refused.
    assert_eq!(
        plan("notes.txt", "one\ntwo\nthree\n", "four\n"),
        Plan::AsGiven
    );
}

#[test]
fn a_rewrite_that_replaces_a_definition_is_refused_not_added() {
    // shout is rewritten and helper dropped: adding would define shout twice.
    let old = "def helper(x):\n    return x\n\ndef shout(text):\n    return helper(text).upper()\n";
    let new = "def shout(text):\n    return text.upper() + '!'\n";
    let message = refused(plan("text_utils.py", old, new));
    assert!(message.contains("including `helper`"), "{message}");
    assert!(message.contains("call edit_file"), "{message}");
}

#[test]
fn a_rewrite_under_new_names_that_keeps_a_line_is_refused_not_added() {
    // A rename done by rewriting the file: adding it would leave calc_tax beside compute_tax.
    let old = "RATE = 0.2\n\n\ndef calc_tax(amount):\n    return round(amount * RATE, 2)\n";
    let new = "def compute_tax(amount):\n    return round(amount * RATE, 2)\n";
    let message = refused(plan("tax.py", old, new));
    assert!(message.contains("`RATE` and `calc_tax`"), "{message}");
}

#[test]
fn a_settings_file_losing_its_keys_is_refused_without_appending_to_it() {
    let old =
        "[project]\nname = \"shelf\"\nversion = \"1.2.0\"\n\n[tool.black]\nline-length = 100\n";
    let new = "version = '1.3.0'\n[dependencies]\nrequests = '2.28.0'\n";
    let message = refused(plan("pyproject.toml", old, new));
    assert!(
        message.contains("`[project]`, `[tool.black]`, `line-length` and `name`"),
        "{message}"
    );
}

#[test]
fn definitions_are_found_in_the_usual_languages_and_blocks_are_not_names() {
    let text = "#!/bin/sh\ncount() {\n  wc -l \"$1\"\n}\nexport function max(xs) {}\nconst LIMIT = 3;\npub fn run() {}\nelse:\n    pass\n  nested: 1\nname: tests\nif x == 1:\n";
    let names: Vec<String> = defined_names(text).into_iter().collect();
    assert_eq!(names, ["LIMIT", "count", "max", "name", "run"]);
}

#[test]
fn a_kept_write_runs_with_the_kept_content_and_says_so_once_per_file_and_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), CONFIG).unwrap();
    let mut aid = KeepContent::new(&start(dir.path()));
    let mut calls = vec![write("1", "config.json", "{\"debug\": false}")];
    aid.adjust_calls(&mut calls);
    let (_, _, content) = write_target(dir.path(), &calls[0]).unwrap();
    assert!(content.contains("\"debug\": false") && content.contains("\"port\": 8080"));
    assert!(matches!(aid.before_tool_calls(&calls), CallVerdict::Run));
    // The write ran (as the tool would): its result gets the note.
    std::fs::write(dir.path().join("config.json"), &content).unwrap();
    let mut outputs = vec![ResponseItem::FunctionCallOutput {
        call_id: "1".into(),
        output: FunctionCallOutputPayload::from("Success.".to_string()),
    }];
    aid.after_tool_outputs(&mut outputs);
    let ResponseItem::FunctionCallOutput { output, .. } = &outputs[0] else {
        unreachable!()
    };
    assert!(
        output.text().contains("so they were kept"),
        "{}",
        output.text()
    );
    // The second write of the file in the turn is made as given.
    let mut again = vec![write("2", "./config.json", "{\"debug\": true}")];
    aid.adjust_calls(&mut again);
    assert_eq!(
        write_target(dir.path(), &again[0]).unwrap().2,
        "{\"debug\": true}"
    );
    assert!(matches!(aid.before_tool_calls(&again), CallVerdict::Run));
}

#[test]
fn a_refused_write_is_refused_once_and_new_files_never() {
    let dir = tempfile::tempdir().unwrap();
    let old = "def helper(x):\n    return x\n\ndef shout(text):\n    return helper(text).upper()\n";
    std::fs::write(dir.path().join("t.py"), old).unwrap();
    let mut aid = KeepContent::new(&start(dir.path()));
    let rewrite = write("1", "t.py", "def shout(text):\n    return text.upper()\n");
    let mut calls = vec![rewrite.clone()];
    aid.adjust_calls(&mut calls);
    assert_eq!(calls[0], rewrite, "not changed");
    let CallVerdict::Answer { outputs } = aid.before_tool_calls(&calls) else {
        panic!("refused");
    };
    assert!(
        outputs[0].1.text.starts_with("Not written"),
        "{}",
        outputs[0].1.text
    );
    assert!(matches!(aid.before_tool_calls(&calls), CallVerdict::Run));
    let fresh = write("3", "new.json", "{\"a\": 1}");
    assert!(matches!(aid.before_tool_calls(&[fresh]), CallVerdict::Run));
}
