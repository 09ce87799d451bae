//! parse_arguments: good calls parse, and every kind of bad call gets a plain-words message.

use osprey_tools::{
    ExecCommandArgs, GrepFilesArgs, ReadFileArgs, SandboxPermissions, ShellArgs, ToolInputError,
    UpdatePlanArgs, WriteStdinArgs, parse_arguments,
};
use pretty_assertions::assert_eq;

fn exec_err(raw: &str) -> String {
    parse_arguments::<ExecCommandArgs>("exec_command", raw)
        .unwrap_err()
        .to_string()
}

const EXEC_USAGE: &str = "Call exec_command with a JSON object with required `cmd` (string) \
    and optional `justification` (string), `login` (boolean), `max_output_tokens` (whole \
    number), `prefix_rule` (list of strings), `sandbox_permissions` (one of \"use_default\", \
    \"require_escalated\"), `shell` (string), `tty` (boolean), `workdir` (string), \
    `yield_time_ms` (whole number).";

#[test]
fn a_full_exec_command_call_parses() {
    let args: ExecCommandArgs = parse_arguments(
        "exec_command",
        r#"{"cmd":"cargo test","workdir":"/repo","shell":"/bin/zsh","login":false,"tty":true,
            "yield_time_ms":500,"max_output_tokens":2000,"sandbox_permissions":"require_escalated",
            "justification":"Run the tests with network?","prefix_rule":["cargo","test"]}"#,
    )
    .unwrap();
    assert_eq!(args.cmd, "cargo test");
    assert!(!args.login());
    assert!(args.tty());
    assert_eq!(args.yield_time_ms(), 500);
    assert_eq!(args.max_output_tokens(), 2000);
    assert_eq!(
        args.sandbox_permissions(),
        SandboxPermissions::RequireEscalated
    );
    assert_eq!(
        args.prefix_rule,
        Some(vec!["cargo".to_string(), "test".to_string()])
    );
}

#[test]
fn missing_required_field_names_it_and_shows_usage() {
    assert_eq!(
        exec_err(r#"{"workdir":"/tmp"}"#),
        format!("failed to parse function arguments: missing field `cmd`. {EXEC_USAGE}")
    );
}

#[test]
fn arguments_that_are_not_json_say_where() {
    assert_eq!(
        exec_err("{cmd: ls}"),
        format!(
            "failed to parse function arguments: the arguments are not valid JSON (key must be \
             a string at line 1 column 2); send one JSON object. {EXEC_USAGE}"
        )
    );
    assert!(
        exec_err(r#"["ls"]"#).contains("the arguments must be a JSON object, but they are a list")
    );
}

#[test]
fn wrong_types_name_the_field() {
    assert!(
        exec_err(r#"{"cmd":"ls","yield_time_ms":"soon"}"#).starts_with(
            "failed to parse function arguments: expected a number for `yield_time_ms`, but got \
         the string \"soon\". Call exec_command"
        )
    );
    assert!(exec_err(r#"{"cmd":["ls"]}"#).contains("expected a string for `cmd`, but got a list"));
    assert!(exec_err(r#"{"cmd":"ls","sandbox_permissions":"root"}"#).contains(
        "`sandbox_permissions` must be one of \"use_default\", \"require_escalated\", but it is \"root\""
    ));
}

#[test]
fn negative_and_fractional_numbers_are_rejected() {
    assert!(
        exec_err(r#"{"cmd":"ls","yield_time_ms":-5}"#)
            .contains("`yield_time_ms` must be 0 or more, but it is -5")
    );
    assert!(
        exec_err(r#"{"cmd":"ls","max_output_tokens":-1}"#)
            .contains("`max_output_tokens` must be 0 or more, but it is -1")
    );
    assert!(
        exec_err(r#"{"cmd":"ls","max_output_tokens":2.5}"#)
            .contains("`max_output_tokens` must be a whole number, but it is 2.5")
    );
    let err = parse_arguments::<WriteStdinArgs>("write_stdin", r#"{"session_id":-1}"#).unwrap_err();
    assert!(err.to_string().contains("`session_id` must be 0 or more"));
}

#[test]
fn absurdly_large_numbers_are_clamped() {
    let args: ExecCommandArgs = parse_arguments(
        "exec_command",
        r#"{"cmd":"ls","yield_time_ms":18446744073709551615,"max_output_tokens":1e18}"#,
    )
    .unwrap();
    assert_eq!(args.yield_time_ms(), 30_000);
    assert_eq!(args.max_output_tokens(), 100_000);
    let tiny: ExecCommandArgs = parse_arguments(
        "exec_command",
        r#"{"cmd":"ls","yield_time_ms":1,"max_output_tokens":0}"#,
    )
    .unwrap();
    assert_eq!(tiny.yield_time_ms(), 250);
    assert_eq!(tiny.max_output_tokens(), 1);
    assert!(exec_err(r#"{"cmd":"ls","yield_time_ms":1e300}"#).contains("is far too large"));
}

#[test]
fn unknown_fields_are_refused_with_the_accepted_list() {
    assert!(exec_err(r#"{"cmd":"ls","timeout_ms":5}"#).starts_with(
        "failed to parse function arguments: unknown field `timeout_ms` (accepted fields: \
         `cmd`, `justification`, `login`"
    ));
}

#[test]
fn nulls_mean_absent() {
    let args: WriteStdinArgs = parse_arguments(
        "write_stdin",
        r#"{"session_id":3,"chars":null,"yield_time_ms":null,"max_output_tokens":null}"#,
    )
    .unwrap();
    assert_eq!(args.chars(), "");
    assert_eq!(args.yield_time_ms(), 250);
    assert_eq!(args.max_output_tokens(), 10_000);
}

#[test]
fn shell_takes_an_argv_list() {
    let args: ShellArgs = parse_arguments(
        "shell",
        r#"{"command":["bash","-lc","ls"],"timeout_ms":1000}"#,
    )
    .unwrap();
    assert_eq!(args.command, ["bash", "-lc", "ls"]);
    let err = parse_arguments::<ShellArgs>("shell", r#"{"command":"ls"}"#).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected a list for `command`, but got the string \"ls\"")
    );
}

#[test]
fn nested_fields_are_checked_with_their_path() {
    let err = parse_arguments::<ReadFileArgs>(
        "read_file",
        r#"{"file_path":"/a","mode":"indentation","indentation":{"anchor_line":"3"}}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("expected a number for `indentation.anchor_line`")
    );
    let err = parse_arguments::<UpdatePlanArgs>(
        "update_plan",
        r#"{"plan":[{"step":"a","status":"done"}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains(
        "`plan[0].status` must be one of \"pending\", \"in_progress\", \"completed\", but it is \"done\""
    ));
}

#[test]
fn errors_never_contain_rust_debug_text() {
    for raw in [
        "",
        "null",
        "{",
        r#"{"pattern":1}"#,
        r#"{"pattern":"x","limit":-2}"#,
        r#"{"pattern":"x","extra":true}"#,
    ] {
        let Err(err) = parse_arguments::<GrepFilesArgs>("grep_files", raw) else {
            continue;
        };
        let text = err.to_string();
        assert!(
            text.starts_with("failed to parse function arguments: "),
            "{text}"
        );
        for leak in ["Error(", "u64", "struct ", "Some(", "\\\""] {
            assert!(!text.contains(leak), "{text} contains {leak}");
        }
        assert!(matches!(err, ToolInputError::Parse { .. }));
    }
}

#[test]
fn empty_arguments_count_as_an_empty_object() {
    let err = parse_arguments::<GrepFilesArgs>("grep_files", "  ").unwrap_err();
    assert!(err.to_string().contains("missing field `pattern`"));
}
