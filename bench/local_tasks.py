#!/usr/bin/env python3
"""The embedded model's task set: how many small tasks it finishes, with which aids.

The tasks (17, defined in local_tasks_set.py) each run in a fresh git repository and are
checked from the outcome (files, the commands in the `--json` events, the exact answer), not
from what the model says: hello, add, fix, answer, pages, where, count, total, rename, json,
toml, yaml, agents, named, shell (bash), fizz and maxjs (JavaScript).

Ablation (`--mode ablation`, the default): the tasks run under `osprey exec` with the local
provider, with the quality aids switched on one by one through `-c local_model.*`:
  none            unconstrained sampling, standard tools and instructions, no loop guard,
                  no prefix cache
  +constrained    + grammar-constrained decoding
  +local profile  + write_file/edit_file/read_file/list_dir/shell_command and the compact
                  rules
  +loop guard     + the loop guard
  +prefix cache   + the prefix cache (all defaults; changes speed, not answers)

Aids (`--mode aids`): the default configuration ("all aids"), then each of the local
profile's harness aids (read before write, verify the named check, answer from evidence,
related files, the edit tool, the expected-output check, the named check's protection, the
repeat nudge, read-only questions, …) switched off alone ("-edit_tool", …), an aid that is
off by default (the write diff) switched on alone instead ("+write_diff"), then all of them
off together ("none of these").

Harnesses (`--mode harness`): the same model behind `osprey model serve`, driven by the
reference Codex CLI and by Osprey's normal (hosted-model) harness, each with its own tools and
instructions, so the two harnesses are compared on the same model.

Sampling is greedy, yet a configuration does not give the same answers on every run: the
batch split of a long prompt changes near-ties between tokens, and one pass of the set moves by
about two tasks from run to run (2026-12-05). --repeat N runs the set N times per configuration;
the table then shows per task how many of the N runs solved it. A run that is still going after
--timeout seconds counts as a failure. Prints one JSON line per run and a table at the end.

Usage: bench/local_tasks.py OSPREY_BIN [--mode ablation|aids|harness] [--codex CODEX_BIN]
                            [--tasks hello,add,...] [--configs NAME,...]
                            [--timeout SECONDS] [--repeat N] [--keep-sessions]
                            [--acted-from LOG,...]
--acted-from LOG,... (with --mode aids): each "-aid" configuration runs only the tasks in which
that aid acted in an "all aids" run of these earlier outputs of this script; an aid that did
not act in a task left its run as it was, so only where it acted can switching it off change
anything beyond the run-to-run spread. The edit tool changes the tool list of every request, so
"-edit_tool" runs every task.
Each local-provider run records the aids that acted in it ("aids" in its JSON line) from the
"aid acted" lines `RUST_LOG=osprey_core::inspect=debug` makes Osprey print on stderr.
--keep-sessions runs the local-provider configurations without --ephemeral, so each run's
session file (every call and the result the model read, which the --json events do not all
show: a failed edit_file, for one) is kept under the configuration's OSPREY_HOME, printed as
"home" in the run's JSON line.
Needs OSPREY_LOCAL_MODEL (the verified GGUF; scripts/install-test-deps.sh prints it).
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
from local_tasks_set import TASKS  # noqa: E402

ABLATION = [
    ("none", {"constrained_decoding": "false", "tool_profile": '"standard"',
              "loop_guard": "false", "prefix_cache": "false"}),
    ("+constrained", {"constrained_decoding": "true", "tool_profile": '"standard"',
                      "loop_guard": "false", "prefix_cache": "false"}),
    ("+local profile", {"constrained_decoding": "true", "tool_profile": '"local"',
                        "loop_guard": "false", "prefix_cache": "false"}),
    ("+loop guard", {"constrained_decoding": "true", "tool_profile": '"local"',
                     "loop_guard": "true", "prefix_cache": "false"}),
    ("+prefix cache", {}),
]

# The harness aids of the local profile, each switched off alone from the default
# configuration (everything on), to see what each is worth on the whole set.
AIDS = ["read_before_write", "verify_named_check", "answer_from_evidence", "related_files",
        "write_diff", "edit_tool", "check_expected_output",
        "protect_named_check", "repeat_nudge", "question_read_only",
        "hide_call_narration", "question_focus", "keep_content", "fix_failed_check",
        "missing_name", "context_echo", "strip_line_numbers",
        "quoted_arguments"]
# Aids that are off by default: their row switches the aid on ("+write_diff") instead.
OFF_BY_DEFAULT = ["write_diff"]
AID_ABLATION = ([("all aids", {})]
                + [(f"+{aid}", {aid: "true"}) if aid in OFF_BY_DEFAULT
                   else (f"-{aid}", {aid: "false"}) for aid in AIDS]
                + [("none of these", {aid: "false" for aid in AIDS})])


def make_repo(files):
    cwd = tempfile.mkdtemp(prefix="local-task-")
    subprocess.run(["git", "init", "-q", cwd], check=True)
    for name, text in files.items():
        path = os.path.join(cwd, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return cwd


def run(argv, env, cwd, timeout):
    """Runs argv in its own process group; returns (exit code or None on timeout, stdout,
    stderr, wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return code, out, err, time.perf_counter() - start


def parse_events(out):
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return events


def attempt(label, task, argv_for, env, timeout, run_no=1):
    files, prompt, check = TASKS[task]
    cwd = make_repo(files)
    code, out, err, wall = run(argv_for(prompt), env, cwd, timeout)
    events = parse_events(out)
    with open(cwd + ".events.jsonl", "w") as f:
        f.write(out)
    with open(cwd + ".stderr", "w") as f:
        f.write(err)
    if code is None:
        ok, why = False, f"still running after {timeout} s"
    else:
        ok, why = check(cwd, events)
        if ok and code != 0:
            ok, why = False, f"exit {code}: {err.strip()[-200:]}"
    aids = acted_aids(err)
    calls = sum(1 for e in events if e.get("type") == "item.completed"
                and e.get("item", {}).get("type") in ("command_execution", "file_change",
                                                      "mcp_tool_call"))
    result = {"config": label, "run": run_no, "task": task, "ok": ok, "why": why,
              "wall_s": round(wall, 1), "tool_items": calls, "aids": aids, "dir": cwd}  # the run's events: <dir>.events.jsonl
    if KEEP_SESSIONS:
        result["home"] = env.get("OSPREY_HOME")
    print(json.dumps(result), flush=True)
    return result


def acted_aids(stderr):
    """The `[local_model]` switch names of the aids whose "aid acted" line is in `stderr`
    (`aid=KeepContent` is the switch `keep_content`), sorted."""
    names = re.findall(r"aid acted aid=(\w+)", stderr)
    return sorted({re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower() for name in names})


def tasks_where_acted(logs):
    """From earlier outputs of this script: per aid, the tasks in which it acted in an
    "all aids" run."""
    acted = {}
    for log in logs:
        with open(log) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(r, dict) and r.get("config") == "all aids":
                    for aid in r.get("aids", []):
                        acted.setdefault(aid, set()).add(r["task"])
    return acted


def bench_home(prefix):
    """A fresh home for one configuration, outside the temporary directory: Codex refuses to
    create its sandbox helper's PATH aliases (`codex-linux-sandbox`) under a CODEX_HOME in
    /tmp, and then cannot run a sandboxed command at all."""
    root = os.environ.get("OSPREY_BENCH_HOMES",
                          os.path.join(os.path.expanduser("~"), ".cache", "osprey-bench"))
    os.makedirs(root, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=root)


def base_env(home):
    model = os.environ.get("OSPREY_LOCAL_MODEL")
    if not model or not os.path.isfile(model):
        raise SystemExit("set OSPREY_LOCAL_MODEL to the verified GGUF "
                         "(eval \"$(bash scripts/install-test-deps.sh)\")")
    return {"PATH": os.environ["PATH"], "HOME": home, "SHELL": "/bin/bash", "NO_COLOR": "1",
            "OSPREY_HOME": os.path.join(home, ".osprey"), "CODEX_HOME": os.path.join(home, ".codex"),
            "OSPREY_MODEL_CACHE": os.path.dirname(os.path.abspath(model))}


# Whether local-provider runs keep their session files (--keep-sessions).
KEEP_SESSIONS = False


def ablation(osprey, tasks, configs, timeout, repeat, rows=ABLATION, acted=None):
    """`acted` (aid → tasks where it acted) narrows each "-aid" row to those tasks."""
    results = []
    for label, switches in rows:
        if configs and label not in configs:
            continue
        mine = tasks
        if acted is not None and label.startswith("-") and label != "-edit_tool":
            mine = [t for t in tasks if t in acted.get(label[1:], set())]
        if not mine:
            continue
        home = bench_home("local-bench-home-")
        env = {**base_env(home), "RUST_LOG": "warn,osprey_core::inspect=debug"}
        overrides = []
        for key, value in switches.items():
            overrides += ["-c", f"local_model.{key}={value}"]

        def argv_for(prompt, overrides=overrides):
            ephemeral = [] if KEEP_SESSIONS else ["--ephemeral"]
            return [osprey, "exec", "--json", *ephemeral, "-s", "workspace-write",
                    "-c", 'model_provider="local"', *overrides, prompt]

        for run_no in range(1, repeat + 1):
            for task in mine:
                results.append(attempt(label, task, argv_for, env, timeout, run_no))
    return results


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(osprey, env):
    """Starts `osprey model serve`; its stderr (the "serving" line, then one line per
    request) goes to a log file next to the task directories."""
    port = free_port()
    log_path = tempfile.mktemp(prefix="local-bench-serve-", suffix=".log")
    log = open(log_path, "w")
    proc = subprocess.Popen([osprey, "model", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=log, text=True,
                            start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        with open(log_path) as f:
            if "serving" in f.read():
                print(json.dumps({"server_log": log_path}), flush=True)
                return proc, f"http://127.0.0.1:{port}/v1"
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise SystemExit(f"osprey model serve did not start; see {log_path}")


def provider_toml(base_url, extra=""):
    return f'''model = "qwen2.5-coder-1.5b-instruct-q4_k_m"
model_provider = "served"
{extra}
[model_providers.served]
name = "osprey model serve"
base_url = "{base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 900000
'''


def harness(osprey, codex, tasks, configs, timeout, repeat):
    home = bench_home("local-bench-serve-")
    env = base_env(home)
    # `model serve` needs the model installed in its home; `exec` would fetch it first.
    subprocess.run([osprey, "model", "fetch"], env=env, check=True, stdout=subprocess.DEVNULL)
    server, base_url = start_server(osprey, env)
    results = []
    try:
        runners = []
        if codex:
            os.makedirs(env["CODEX_HOME"], exist_ok=True)
            with open(os.path.join(env["CODEX_HOME"], "config.toml"), "w") as f:
                f.write(provider_toml(base_url))
            runners.append(("codex via serve", lambda p: [
                codex, "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", p]))
        with open(os.path.join(env["OSPREY_HOME"], "config.toml"), "w") as f:
            # The server reads calls as JSON, so the patch tool is a JSON function here.
            f.write(provider_toml(base_url, 'approval_policy = "never"\n'
                                  '[tools]\napply_patch = "function"\n'))
        runners.append(("osprey via serve", lambda p: [
            osprey, "exec", "--json", "--ephemeral", "-s", "workspace-write", p]))
        for label, argv_for in runners:
            if configs and label not in configs:
                continue
            for run_no in range(1, repeat + 1):
                for task in tasks:
                    results.append(attempt(label, task, argv_for, env, timeout, run_no))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
    return results


def table(results, tasks, repeat):
    """One row per configuration: per task yes/no (one run) or solved/runs, then the tasks
    solved per run (mean over runs) and the wall time of one pass (mean)."""
    labels = []
    for r in results:
        if r["config"] not in labels:
            labels.append(r["config"])
    print()
    print(f"{'configuration':22} " + " ".join(f"{t:>6}" for t in tasks)
          + f" {'solved':>7} {'wall s':>8}")
    for label in labels:
        mine = [r for r in results if r["config"] == label]

        def cell(task):
            runs = [r for r in mine if r["task"] == task]
            if not runs:
                return "-"
            solved = sum(1 for r in runs if r["ok"])
            if repeat == 1:
                return "yes" if solved else "no"
            return f"{solved}/{len(runs)}"

        cells = " ".join(f"{cell(t):>6}" for t in tasks)
        runs = max(1, len({r.get("run", 1) for r in mine}))
        solved = sum(1 for r in mine if r["ok"]) / runs
        wall = sum(r["wall_s"] for r in mine) / runs
        done = len({r["task"] for r in mine})
        print(f"{label:22} {cells} {solved:>4.3g}/{done:<2} {wall:>8.0f}")


def main():
    args = sys.argv[1:]

    def option(name, default=None):
        if name in args:
            i = args.index(name)
            value = args[i + 1]
            del args[i:i + 2]
            return value
        return default

    global KEEP_SESSIONS
    if "--keep-sessions" in args:
        args.remove("--keep-sessions")
        KEEP_SESSIONS = True
    mode = option("--mode", "ablation")
    codex = option("--codex")
    tasks = option("--tasks", ",".join(TASKS)).split(",")
    configs = [c for c in option("--configs", "").split(",") if c]
    timeout = float(option("--timeout", "300"))
    repeat = option("--repeat", "1")
    acted_from = option("--acted-from")
    if len(args) != 1 or mode not in ("ablation", "aids", "harness") \
            or any(t not in TASKS for t in tasks) or not repeat.isdigit() or int(repeat) < 1:
        raise SystemExit(__doc__)
    osprey = os.path.abspath(args[0])
    repeat = int(repeat)
    if mode == "ablation":
        results = ablation(osprey, tasks, configs, timeout, repeat)
    elif mode == "aids":
        acted = tasks_where_acted(acted_from.split(",")) if acted_from else None
        results = ablation(osprey, tasks, configs, timeout, repeat, AID_ABLATION, acted)
    else:
        results = harness(osprey, codex and os.path.abspath(codex), tasks, configs, timeout,
                          repeat)
    table(results, tasks, repeat)


if __name__ == "__main__":
    main()
