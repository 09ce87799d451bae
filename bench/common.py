"""Helpers shared by the side-by-side benchmarks (osprey vs the reference codex): the scripted
mock model, a home with a config that points at it, process-tree memory, and medians."""

import json
import os
import statistics
import subprocess
import tempfile
import time

USAGE = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
         "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
         "total_tokens": 110}


def ev(kind, **fields):
    return {"type": kind, **fields}


def answer_sse(rid, deltas):
    """A streamed assistant message: item added, the text deltas, item done, completed."""
    text = "".join(deltas)
    mid = "msg_" + rid
    events = [
        ev("response.created", response={"id": rid, "status": "in_progress"}),
        ev("response.output_item.added", output_index=0,
           item={"type": "message", "role": "assistant", "id": mid,
                 "status": "in_progress", "content": []}),
    ]
    events += [ev("response.output_text.delta", output_index=0, content_index=0, delta=d)
               for d in deltas]
    events += [
        ev("response.output_item.done", output_index=0,
           item={"type": "message", "role": "assistant", "id": mid, "status": "completed",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        ev("response.completed", response={"id": rid, "status": "completed", "usage": USAGE}),
    ]
    return {"sse": events}


def start_mock(mock_bin, script, scratch, what="bench", routes=None, repeat=True):
    """`osprey-mock-model --script …` (with `--repeat` unless told otherwise, and a
    `--route NAME=FILE` per entry of `routes`); returns (process, base URL)."""
    def dump(obj):
        path = os.path.join(scratch, f"script-{len(os.listdir(scratch))}.json")
        with open(path, "w") as f:
            json.dump(obj, f)
        return path

    argv = [mock_bin, "--script", dump(script)]
    if repeat:
        argv.append("--repeat")
    for name, route in (routes or {}).items():
        argv += ["--route", f"{name}={dump(route)}"]
    err = open(os.path.join(scratch, "mock.err"), "a")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"{what}: the mock model did not start ({line!r}); see {err.name}")
    return proc, line[len("listening on "):]


def stop_mock(proc, scratch, what="bench"):
    """Stops the mock; fails when it recorded problems (they are in scratch/mock.err)."""
    proc.terminate()
    proc.wait(timeout=10)
    if proc.returncode != 0:
        with open(os.path.join(scratch, "mock.err")) as f:
            raise SystemExit(f"{what}: the mock model found problems:\n{f.read()}")


def write_home(scratch, kind, base_url, extra="", model="gpt-5.5", sandbox="read-only"):
    """A home (used as both CODEX_HOME and OSPREY_HOME) whose config uses the mock."""
    home = tempfile.mkdtemp(prefix=f"home-{kind}-", dir=scratch)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'''model = "{model}"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "{sandbox}"
{extra}
[model_providers.mock]
name = "mock"
base_url = "{base_url}"
env_key = "BENCH_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
''')
    return home


def call_sse(rid, calls):
    """A response of tool calls: `calls` is a list of (call_id, name, arguments) or
    (call_id, name, arguments, namespace), or ready output items (dicts)."""
    events = [ev("response.created", response={"id": rid, "status": "in_progress"})]
    for index, call in enumerate(calls):
        if isinstance(call, dict):
            item = call
        else:
            call_id, name, args = call[:3]
            item = {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
                    "name": name, "call_id": call_id, "arguments": json.dumps(args)}
            if len(call) > 3:
                item["namespace"] = call[3]
        events.append(ev("response.output_item.done", output_index=index, item=item))
    events.append(ev("response.completed",
                     response={"id": rid, "status": "completed", "usage": USAGE}))
    return {"sse": events}


def peak_rss_run(argv, env, cwd):
    """Runs argv under GNU time; returns (wall seconds, peak RSS MiB, completed process).
    GNU time forks from a small process, so the RSS is the binary's own (not this script's
    Python high-water mark, which a child forked from here would inherit)."""
    with tempfile.NamedTemporaryFile("r") as out:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], env=env,
                              cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True)
        wall = time.perf_counter() - start
        text = out.read().split()
    rss = int(text[-1]) / 1024.0 if text and text[-1].isdigit() else float("nan")
    return wall, rss, done


def tree_rss_kib(pid):
    """VmRSS of `pid` and its descendants, in KiB (0 once it is gone)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def processes_under(folder):
    """Pids of the processes whose executable lives under `folder` (e.g. a daemon a TUI
    started from its home that outlives it and is not its child)."""
    folder = os.path.realpath(folder) + os.sep
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{entry}/exe")
        except OSError:
            continue
        if exe.startswith(folder):
            found.append(int(entry))
    return found


def pct(samples, q):
    """The q-th percentile (0–100) of samples, nearest rank."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(samples):
    return statistics.median(samples) if samples else float("nan")
