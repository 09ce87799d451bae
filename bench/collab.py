#!/usr/bin/env python3
"""Sub-agents benchmark: one parent spawns 16 children that each run `sleep 0.2`, waits for
each and closes them, vs the same 16 commands run one after another in one thread.

Both scenarios run `osprey exec --json` against `osprey-mock-model` (127.0.0.1), which answers
each child from its own script (routed by nickname). Reports median wall time of each, their
ratio, and the parent process's peak RSS per child thread ((collab - sequential) / 16).

Usage: bench/collab.py OSPREY_BIN MOCK_BIN [--runs N]
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CHILDREN = 16
NICKNAMES = ["Planck", "Goodall", "Cicero", "Laplace", "Parfit", "Kant", "Dalton", "Nash",
             "Pauli", "Harvey", "Curie", "Noether", "Turing", "Hypatia", "Darwin", "Lovelace"]


def ev_created(rid):
    return {"type": "response.created", "response": {"id": rid}}


def ev_message(text):
    return {"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": "m", "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]}}


def ev_call(call_id, name, args, index):
    return {"type": "response.output_item.done", "output_index": index,
            "item": {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
                     "name": name, "call_id": call_id, "arguments": json.dumps(args)}}


def ev_completed(rid):
    return {"type": "response.completed", "response": {"id": rid, "usage": {
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110}}}


def turn(rid, events):
    return {"sse": [ev_created(rid)] + events + [ev_completed(rid)]}


def calls(rid, name, args_list):
    return turn(rid, [ev_call(f"{rid}_{i}", name, a, i) for i, a in enumerate(args_list)])


def collab_scripts():
    names = NICKNAMES[:CHILDREN]
    parent = [
        calls("r1", "spawn_agent", [{"message": f"run sleep 0.2 ({n})"} for n in names]),
        calls("r2", "wait_agent",
              [{"targets": ["{{agent:%s}}" % n], "timeout_ms": 60000} for n in names]),
        calls("r3", "close_agent", [{"target": "{{agent:%s}}" % n} for n in names]),
        turn("r4", [ev_message("All children finished.")]),
    ]
    child = [
        calls("c1", "shell_command", [{"command": "sleep 0.2"}]),
        turn("c2", [ev_message("slept")]),
    ]
    return parent, {n: child for n in names}


def sequential_script():
    return [
        calls("r1", "shell_command", [{"command": "sleep 0.2"}] * CHILDREN),
        turn("r2", [ev_message("All commands finished.")]),
    ]


def dump(obj):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(obj, f)
    f.close()
    return f.name


def start_mock(mock_bin, script, routes):
    argv = [mock_bin, "--script", dump(script)]
    for name, child in routes.items():
        argv += ["--route", f"{name}={dump(child)}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"mock server did not start: {line!r} {proc.stderr.read()}")
    return proc, line[len("listening on "):]


def stop_mock(proc):
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    if proc.returncode != 0:
        raise SystemExit(f"the mock model server found problems:\n{err}")


def write_home(base_url):
    home = tempfile.mkdtemp(prefix="bench-collab-")
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'''model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[tools]
shell_type = "shell_command"

[agents]
max_concurrent_threads_per_session = {CHILDREN}

[model_providers.mock]
name = "mock"
base_url = "{base_url}"
env_key = "BENCH_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
''')
    return home


def run_once(osprey, mock, script, routes):
    """Wall time (s) and peak RSS (MiB) of one `osprey exec --json` run."""
    proc, base_url = start_mock(mock, script, routes)
    home = write_home(base_url)
    cwd = tempfile.mkdtemp(prefix="bench-collab-cwd-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "OSPREY_HOME": home,
           "BENCH_API_KEY": "k", "SHELL": "/bin/bash"}
    argv = ["/usr/bin/time", "-f", "%M", osprey, "exec", "--json", "--skip-git-repo-check",
            "go"]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    stop_mock(proc)
    if done.returncode != 0:
        raise SystemExit(f"osprey exec failed:\n{done.stderr}")
    rss_kib = int(done.stderr.strip().splitlines()[-1])
    return wall, rss_kib / 1024


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    osprey, mock = os.path.abspath(args[0]), os.path.abspath(args[1])
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 5
    parent, routes = collab_scripts()
    collab = [run_once(osprey, mock, parent, routes) for _ in range(runs)]
    seq = [run_once(osprey, mock, sequential_script(), {}) for _ in range(runs)]
    c_wall = statistics.median(w for w, _ in collab)
    s_wall = statistics.median(w for w, _ in seq)
    c_rss = statistics.median(r for _, r in collab)
    s_rss = statistics.median(r for _, r in seq)
    per_child = (c_rss - s_rss) / CHILDREN
    print(f"{CHILDREN} children x sleep 0.2, spawned and waited: {c_wall * 1000:.0f} ms "
          f"(median of {runs})")
    print(f"the same {CHILDREN} commands one after another: {s_wall * 1000:.0f} ms")
    print(f"ratio: {c_wall / s_wall:.2f}x (target <= 0.2x)")
    print(f"peak RSS: {c_rss:.1f} MiB with children, {s_rss:.1f} MiB without: "
          f"{per_child:.2f} MiB per child thread (target <= 2 MiB)")


if __name__ == "__main__":
    main()
