"""Helpers shared by the side-by-side benchmarks (osprey vs the reference codex): the scripted
mock model, a home with a config that points at it, process-tree memory, and medians."""

import json
import os
import statistics
import subprocess
import tempfile

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


def start_mock(mock_bin, script, scratch, what="bench"):
    """`osprey-mock-model --script … --repeat`; returns (process, base URL)."""
    path = os.path.join(scratch, f"script-{len(os.listdir(scratch))}.json")
    with open(path, "w") as f:
        json.dump(script, f)
    err = open(os.path.join(scratch, "mock.err"), "a")
    proc = subprocess.Popen([mock_bin, "--script", path, "--repeat"],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"{what}: the mock model did not start ({line!r}); see {err.name}")
    return proc, line[len("listening on "):]


def write_home(scratch, kind, base_url, extra=""):
    """A home (used as both CODEX_HOME and OSPREY_HOME) whose config uses the mock."""
    home = tempfile.mkdtemp(prefix=f"home-{kind}-", dir=scratch)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'''model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"
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


def pct(samples, q):
    """The q-th percentile (0–100) of samples, nearest rank."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(samples):
    return statistics.median(samples) if samples else float("nan")
