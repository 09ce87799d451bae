//! [`FixFailedCheck`] (`fix_failed_check`): the request names a check (`python3 -m
//! unittest`, `sh check.sh`), its last run since the last write failed or ran no tests
//! ("Ran 0 tests", pytest's "no tests ran"), and the model ends its turn. It is told once
//! that the task is not done until the check passes, with the end of the check's output,
//! and its next answer must be a call.

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::ResponseItem;
use std::collections::HashMap;

use super::check_aids::{command_of, named_commands, runs};
use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS};
use crate::tools::call::ToolCall;

/// Most output lines the reminder shows.
const FAILED_CHECK_LINES: usize = 8;

/// A named check's last run that did not pass.
struct FailedRun {
    named: String,
    /// The end of its output.
    tail: String,
    /// The report line saying it ran no tests, when that is why it did not pass.
    no_tests: Option<String>,
}

/// Sends a named check's failure back once when the turn would end on it.
pub(crate) struct FixFailedCheck {
    named: Vec<String>,
    /// Shell calls of the batch being run, by call id: the named check each runs.
    running: HashMap<String, String>,
    /// The named check whose last run since the last write failed or ran no tests.
    failed: Option<FailedRun>,
    asked: bool,
    require_call: bool,
}

impl FixFailedCheck {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            named: named_commands(start.request),
            running: HashMap::new(),
            failed: None,
            asked: false,
            require_call: false,
        }
    }
}

/// The exit code a shell result reports (the exec output's status line).
fn exit_code(output: &str) -> Option<i32> {
    output.lines().take(6).find_map(|line| {
        line.trim()
            .strip_prefix("Process exited with code ")?
            .parse()
            .ok()
    })
}

/// The exit code pytest and unittest (Python 3.12+) give a run that found no tests.
const NO_TESTS_EXIT: i32 = 5;

/// The line of a test runner's report that says it found no tests, if there is one:
/// unittest's `Ran 0 tests` (and its `NO TESTS RAN` from Python 3.12), pytest's `no tests
/// ran`, node's `# tests 0`; go's `[no test files]` and cargo's `running 0 tests` only when
/// no package or test binary ran any.
fn no_tests_line(output: &str) -> Option<&str> {
    let said = |line: &str| {
        let lower = line.trim().to_lowercase();
        lower.starts_with("ran 0 tests")
            || lower.contains("no tests ran")
            || lower.trim_start_matches(['#', 'ℹ', ' ']) == "tests 0"
    };
    if let Some(line) = output.lines().find(|line| said(line)) {
        return Some(line.trim());
    }
    let go_ran = output.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("ok ") || line.starts_with("ok\t") || line.starts_with("FAIL")
    });
    let go_empty = output.lines().find(|line| line.contains("[no test files]"));
    if let (Some(line), false) = (go_empty, go_ran) {
        return Some(line.trim());
    }
    let mut cargo_runs = output
        .lines()
        .filter_map(|line| line.trim().strip_prefix("running "))
        .filter_map(|rest| rest.strip_suffix(" tests").or(rest.strip_suffix(" test")))
        .peekable();
    cargo_runs.peek()?;
    cargo_runs
        .all(|count| count == "0")
        .then_some("running 0 tests")
}

/// The last [`FAILED_CHECK_LINES`] non-blank lines of a shell result's output.
fn output_tail(output: &str) -> String {
    let body = output
        .split_once("\nOutput:\n")
        .map_or(output, |(_, body)| body);
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(FAILED_CHECK_LINES)..].join("\n")
}

impl TurnInspector for FixFailedCheck {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            prompt.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.running.clear();
        for call in calls {
            if WRITING_TOOLS.contains(&call.tool_name.as_str()) {
                self.failed = None;
            } else if let Some(command) = command_of(call)
                && let Some(named) = self.named.iter().find(|named| runs(&command, named))
            {
                self.running.insert(call.call_id.clone(), named.clone());
            }
        }
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs.iter() {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            let Some(named) = self.running.get(call_id.as_str()) else {
                continue;
            };
            let text = output.text();
            let code = exit_code(&text);
            // A run that failed otherwise (a build error, a crash) is a failure first.
            let no_tests = matches!(code, Some(0 | NO_TESTS_EXIT))
                .then(|| no_tests_line(&text))
                .flatten()
                .map(str::to_owned);
            self.failed = (code != Some(0) || no_tests.is_some()).then(|| FailedRun {
                named: named.clone(),
                tail: output_tail(&text),
                no_tests,
            });
        }
    }

    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        if self.asked {
            return None;
        }
        let FailedRun {
            named,
            tail,
            no_tests,
        } = self.failed.as_ref()?;
        let text = match no_tests {
            Some(line) => format!(
                "The check `{named}` ran no tests on its last run (\"{line}\"), so it \
                 proves nothing yet. The end of its output:\n{tail}\nThe task is not done \
                 until it runs the tests and they pass: make sure the test files exist and \
                 that it finds them, then run it again."
            ),
            None => format!(
                "The check `{named}` failed on its last run. The end of its output:\n{tail}\n\
                 The task is not done until it passes: fix what it reports, then run it again."
            ),
        };
        self.asked = true;
        self.require_call = true;
        Some(ResponseItem::user_text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{self, output, shell, start};
    use pretty_assertions::assert_eq;

    fn write() -> ToolCall {
        test_support::write("w", "a.py", "")
    }

    /// Runs `command` through the aid as call `id`, with `text` as its result.
    fn run(aid: &mut FixFailedCheck, command: &str, id: &str, text: &str) {
        aid.before_tool_calls(&[shell(id, command)]);
        aid.after_tool_outputs(&mut [output(id, text)]);
    }

    const REQUEST: &str =
        "Rename calc_tax to compute_tax, so that python3 -m unittest still passes.";

    #[test]
    fn a_named_check_that_failed_last_is_sent_back_once_with_the_end_of_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid = FixFailedCheck::new(&start(REQUEST, dir.path()));
        aid.before_tool_calls(&[write()]);
        run(
            &mut aid,
            "python3 -m unittest",
            "u1",
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n\
             Traceback (most recent call last):\nImportError: cannot import name 'compute_tax'\n",
        );
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The check `python3 -m unittest` failed on its last run. The end of its output:\n\
             Traceback (most recent call last):\nImportError: cannot import name 'compute_tax'\n\
             The task is not done until it passes: fix what it reports, then run it again."
        );
        let mut prompt = Prompt::default();
        aid.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Required);
        assert_eq!(aid.before_finish(Some("Done.")), None, "once");
    }

    #[test]
    fn a_later_pass_a_later_write_or_another_command_leaves_nothing_to_fix() {
        let dir = tempfile::tempdir().unwrap();
        let failed = "Process exited with code 1\nOutput:\nFAILED\n";
        let mut aid = FixFailedCheck::new(&start(REQUEST, dir.path()));
        run(&mut aid, "python3 -m unittest", "u1", failed);
        run(
            &mut aid,
            "python3 -m unittest -v",
            "u2",
            "Process exited with code 0\nOutput:\nOK\n",
        );
        assert_eq!(aid.before_finish(Some("Done.")), None, "passed last");

        let mut aid = FixFailedCheck::new(&start(REQUEST, dir.path()));
        run(&mut aid, "python3 -m unittest", "u1", failed);
        aid.before_tool_calls(&[write()]);
        assert_eq!(aid.before_finish(Some("Done.")), None, "written since");

        let mut aid = FixFailedCheck::new(&start(REQUEST, dir.path()));
        run(
            &mut aid,
            "ls",
            "u3",
            "Process exited with code 2\nOutput:\nnope\n",
        );
        assert_eq!(aid.before_finish(Some("Done.")), None, "not the check");

        let mut aid = FixFailedCheck::new(&start("Add a docstring to a.py.", dir.path()));
        run(&mut aid, "python3 -m unittest", "u1", failed);
        assert_eq!(aid.before_finish(Some("Done.")), None, "nothing named");
    }

    #[test]
    fn a_named_check_that_ran_no_tests_is_sent_back_even_though_it_exited_zero() {
        let dir = tempfile::tempdir().unwrap();
        let request = "Create add.py and test_add.py, then run the tests with python3 -m unittest.";
        let mut aid = FixFailedCheck::new(&start(request, dir.path()));
        aid.before_tool_calls(&[write()]);
        run(
            &mut aid,
            "python3 -m unittest",
            "u1",
            "Process exited with code 0\nOutput:\n\n----------------------------------------\
             ------------------------------\nRan 0 tests in 0.000s\n\nOK\n",
        );
        let reminder = aid.before_finish(Some("Done, the tests pass.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The check `python3 -m unittest` ran no tests on its last run (\"Ran 0 tests in \
             0.000s\"), so it proves nothing yet. The end of its output:\n\
             ----------------------------------------------------------------------\n\
             Ran 0 tests in 0.000s\nOK\nThe task is not done until it runs the tests and \
             they pass: make sure the test files exist and that it finds them, then run it again."
        );
        assert_eq!(aid.before_finish(Some("Done.")), None, "once");

        // A later run that found the tests passes.
        let mut aid = FixFailedCheck::new(&start(request, dir.path()));
        run(
            &mut aid,
            "python3 -m unittest",
            "u1",
            "Process exited with code 0\nOutput:\nRan 0 tests in 0.000s\n\nOK\n",
        );
        run(
            &mut aid,
            "python3 -m unittest",
            "u2",
            "Process exited with code 0\nOutput:\n.\nRan 1 test in 0.000s\n\nOK\n",
        );
        assert_eq!(aid.before_finish(Some("Done.")), None, "ran a test last");
    }

    #[test]
    fn the_runners_reports_of_no_tests_are_recognised_and_real_runs_are_not() {
        for report in [
            "Ran 0 tests in 0.000s\n\nNO TESTS RAN",
            "============ no tests ran in 0.01s ============",
            "TAP version 13\n# tests 0\n# pass 0",
            "ℹ tests 0\nℹ suites 0",
            "?   \texample.com/m\t[no test files]",
            "running 0 tests\n\ntest result: ok. 0 passed\n\nrunning 0 tests\n",
        ] {
            assert!(no_tests_line(report).is_some(), "{report}");
        }
        for report in [
            "Ran 3 tests in 0.001s\n\nOK",
            "============ 2 passed in 0.01s ============",
            "# tests 10\n# pass 10",
            "running 0 tests\n\nrunning 4 tests\ntest a ... ok",
            "ok  \texample.com/m\t0.002s",
            "?   \texample.com/m/cmd\t[no test files]\nok  \texample.com/m/pkg\t0.01s",
            "4\n",
        ] {
            assert_eq!(no_tests_line(report), None, "{report}");
        }
    }

    #[test]
    fn a_run_that_failed_otherwise_is_told_as_a_failure_even_beside_a_package_without_tests() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid = FixFailedCheck::new(&start(
            "Fix the build, then run go test ./pkg to check.",
            dir.path(),
        ));
        run(
            &mut aid,
            "go test ./pkg",
            "g1",
            "Process exited with code 1\nOutput:\n?   \tex/m/cmd\t[no test files]\n\
             FAIL\tex/m/pkg [build failed]\n",
        );
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        assert!(
            reminder
                .message_text()
                .unwrap()
                .starts_with("The check `go test ./pkg` failed on its last run."),
            "{reminder:?}"
        );
    }
}
