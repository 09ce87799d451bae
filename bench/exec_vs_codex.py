#!/usr/bin/env python3
"""Side-by-side benchmark: `osprey exec --json` vs the reference `codex exec --json`.

Both binaries run the same scripted scenarios against the same mock model server
(`osprey-mock-model`, 127.0.0.1) in the same run, so the numbers are comparable as ratios.
Reports medians of wall time and peak RSS (from wait4), `--version` time and binary sizes.

Usage: bench/exec_vs_codex.py OSPREY_BIN CODEX_BIN MOCK_BIN [--runs N]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def ev_created(rid):
    return {"type": "response.created", "response": {"id": rid}}


def ev_message(mid, text):
    return {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]},
    }


def ev_call(call_id, cmd, index):
    return {
        "type": "response.output_item.done",
        "output_index": index,
        "item": {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
                 "name": "exec_command", "call_id": call_id,
                 "arguments": json.dumps({"cmd": cmd})},
    }


def ev_completed(rid):
    return {"type": "response.completed", "response": {"id": rid, "usage": {
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110}}}


SCENARIOS = {
    "text-only turn": [
        {"sse": [ev_created("r1"), ev_message("m1", "Hello."), ev_completed("r1")]},
    ],
    "turn with two tool calls": [
        {"sse": [ev_created("r1"), ev_call("c1", "echo one", 0), ev_call("c2", "echo two", 1),
                 ev_completed("r1")]},
        {"sse": [ev_created("r2"), ev_message("m1", "Done."), ev_completed("r2")]},
    ],
}


def start_mock(mock_bin, script):
    path = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(script, path)
    path.close()
    proc = subprocess.Popen([mock_bin, "--script", path.name, "--repeat"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"mock server did not start: {line!r}")
    return proc, line[len("listening on "):]


def write_home(kind, base_url):
    home = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'''model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "{base_url}"
env_key = "BENCH_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
''')
    return home


def measure(argv, env, cwd, runs):
    """Median wall time (s) and median peak RSS (MiB) over `runs` runs."""
    walls, rss = [], []
    for _ in range(runs):
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.chdir(cwd)
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{argv[0]} failed (exit {os.waitstatus_to_exitcode(status)}); "
                             f"run it by hand: {' '.join(argv)}")
        rss.append(peak_rss(argv, env, cwd))
    return statistics.median(walls), statistics.median(rss)


def peak_rss(argv, env, cwd):
    """Peak RSS (MiB) of one more run, through GNU time. A process forked from this script
    starts with the script's own RSS (~11 MiB of Python), and `ru_maxrss` keeps that high
    water mark across `exec`: anything smaller would read as Python's size. GNU time forks
    from a small process, so its child's floor is ~1.5 MiB."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], env=env, cwd=cwd,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        return int(out.read().split()[-1]) / 1024.0


def main():
    args = sys.argv[1:]
    runs = 10
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    osprey, codex, mock = (os.path.abspath(a) for a in args)
    work = tempfile.mkdtemp(prefix="bench-work-")
    subprocess.run(["git", "init", "-q", work], check=True)
    rows = []
    for name, script in SCENARIOS.items():
        proc, base_url = start_mock(mock, script)
        try:
            results = {}
            for kind, binary in (("osprey", osprey), ("codex", codex)):
                home = write_home(kind, base_url)
                env = {"PATH": os.environ["PATH"], "HOME": home, "BENCH_API_KEY": "k",
                       "SHELL": "/bin/bash", "NO_COLOR": "1",
                       "OSPREY_HOME": home, "CODEX_HOME": home}
                argv = [binary, "exec", "--json", "--skip-git-repo-check", "do it"]
                if kind == "osprey":
                    argv.insert(2, "--ephemeral")
                measure(argv, env, work, 1)  # warm-up
                results[kind] = measure(argv, env, work, runs)
            rows.append((name, results))
        finally:
            proc.terminate()
            proc.wait()

    version = {}
    for kind, binary in (("osprey", osprey), ("codex", codex)):
        env = {"PATH": os.environ["PATH"], "HOME": tempfile.mkdtemp()}
        version[kind] = measure([binary, "--version"], env, work, max(runs, 20))

    print(f"median of {runs} runs; ratio = osprey / codex\n")
    print(f"{'scenario':28} {'osprey':>10} {'codex':>10} {'ratio':>7}   {'osprey RSS':>11} {'codex RSS':>10} {'ratio':>7}")
    for name, r in rows:
        (ow, orss), (cw, crss) = r["osprey"], r["codex"]
        print(f"{name:28} {ow*1000:8.1f}ms {cw*1000:8.1f}ms {ow/cw:7.3f}   {orss:9.1f}Mi {crss:8.1f}Mi {orss/crss:7.3f}")
    (ow, orss), (cw, crss) = version["osprey"], version["codex"]
    print(f"{'--version':28} {ow*1000:8.1f}ms {cw*1000:8.1f}ms {ow/cw:7.3f}   {orss:9.1f}Mi {crss:8.1f}Mi {orss/crss:7.3f}")
    osz, csz = os.path.getsize(osprey), os.path.getsize(codex)
    print(f"{'binary size':28} {osz/2**20:8.1f}Mi {csz/2**20:8.1f}Mi {osz/csz:7.3f}")


if __name__ == "__main__":
    main()
