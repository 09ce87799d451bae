#!/usr/bin/env python3
"""Sub-agents benchmark: one parent spawns 16 children that each run `sleep 0.2`, waits for
each and closes them, vs the same 16 commands run one after another in one thread; the same
two scenarios through the reference Codex for a ratio.

Every run starts its own `osprey-mock-model` (127.0.0.1): the parent's script on the root
thread, and one child script that the catch-all route (`--route '*=…'`) serves to each
sub-agent thread from its start (threads are told apart by the `thread_id` of their turn
metadata, which both Osprey and Codex send). The scripts address the children as
`{{agent:#N}}` (the N-th spawned), so they do not depend on the nicknames.

Codex 0.171 offers its v1 collaboration tools only to catalog models with
`multi_agent_version: "v1"` (the bundled `gpt-5.6-luna`), and only behind `tool_search`: its
parent first calls `tool_search`, then the tools in the `multi_agent_v1` namespace. Osprey
offers them directly to `gpt-5.5`. Both run with approval `never`, no sandbox and
`agents.max_concurrent_threads_per_session = 16`.

Reports, per binary, the median wall time of each scenario, their ratio, and the peak RSS of
the exec process (its children are threads in it) per child thread:
(collab - sequential) / 16.

Usage: bench/collab.py OSPREY_BIN MOCK_BIN [CODEX_BIN] [--runs N]
"""

import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import answer_sse, call_sse, peak_rss_run, start_mock, stop_mock, write_home  # noqa: E402

CHILDREN = 16
SLEEP = {"cmd": "sleep 0.2"}


def collab_scripts(namespace):
    """The parent's script and the script every child gets. `namespace` is how the
    collaboration tools are called: None (Osprey, plain functions) or "multi_agent_v1"
    (Codex, found with tool_search first)."""
    ns = () if namespace is None else (namespace,)
    parent = []
    if namespace is not None:
        parent.append(call_sse("r0", [{"type": "tool_search_call", "call_id": "ts1",
                                       "execution": "client",
                                       "arguments": {"query": "spawn sub-agents", "limit": 8}}]))
    parent += [
        call_sse("r1", [(f"spawn{i}", "spawn_agent", {"message": f"run sleep 0.2 (#{i})"}, *ns)
                        for i in range(CHILDREN)]),
        call_sse("r2", [(f"wait{i}", "wait_agent",
                         {"targets": ["{{agent:#%d}}" % i], "timeout_ms": 60000}, *ns)
                        for i in range(CHILDREN)]),
        call_sse("r3", [(f"close{i}", "close_agent", {"target": "{{agent:#%d}}" % i}, *ns)
                        for i in range(CHILDREN)]),
        answer_sse("r4", ["All children finished."]),
    ]
    child = [call_sse("c1", [("c1", "exec_command", SLEEP)]), answer_sse("c2", ["slept"])]
    return parent, {"*": child}


def sequential_script():
    """The same 16 commands, one per model response, so they run one after another."""
    script = [call_sse(f"s{i}", [(f"s{i}", "exec_command", SLEEP)]) for i in range(CHILDREN)]
    return script + [answer_sse("s-end", ["All commands finished."])], {}


def run_once(kind, binary, mock, scenario, scratch):
    """Wall time (s) and peak RSS (MiB) of one `exec --json` run on a fresh mock."""
    script, routes = scenario
    proc, base_url = start_mock(mock, script, scratch, what=f"collab ({kind})", routes=routes,
                                repeat=False)
    try:
        model = "gpt-5.6-luna" if kind == "codex" else "gpt-5.5"
        extra = f"[agents]\nmax_concurrent_threads_per_session = {CHILDREN}\n"
        home = write_home(scratch, kind, base_url, extra=extra, model=model,
                          sandbox="danger-full-access")
        cwd = tempfile.mkdtemp(prefix=f"cwd-{kind}-", dir=scratch)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "OSPREY_HOME": home,
               "CODEX_HOME": home, "BENCH_API_KEY": "k", "SHELL": "/bin/bash", "NO_COLOR": "1"}
        argv = [binary, "exec", "--json", "--skip-git-repo-check", "go"]
        wall, rss, done = peak_rss_run(argv, env, cwd)
        if done.returncode != 0:
            raise SystemExit(f"collab: {kind} exec failed (exit {done.returncode}):\n"
                             f"{done.stderr[-3000:]}")
        if "collab_tool_call" not in done.stdout and scenario[1]:
            raise SystemExit(f"collab: {kind} made no collaboration calls:\n{done.stdout[-3000:]}")
    finally:
        stop_mock(proc, scratch, what=f"collab ({kind})")
    return wall, rss


def measure(kind, binary, mock, runs, scratch):
    scenarios = {"collab": collab_scripts(None if kind == "osprey" else "multi_agent_v1"),
                 "sequential": sequential_script()}
    out = {}
    for name, scenario in scenarios.items():
        run_once(kind, binary, mock, scenario, scratch)  # warm-up
        samples = [run_once(kind, binary, mock, scenario, scratch) for _ in range(runs)]
        out[name] = (statistics.median(w for w, _ in samples),
                     statistics.median(r for _, r in samples))
    return out


def main():
    args = sys.argv[1:]
    runs = 5
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) not in (2, 3):
        raise SystemExit(__doc__)
    osprey, mock = os.path.abspath(args[0]), os.path.abspath(args[1])
    binaries = [("osprey", osprey)]
    if len(args) == 3:
        binaries.append(("codex", os.path.abspath(args[2])))
    scratch = tempfile.mkdtemp(prefix="bench-collab-")
    results = {kind: measure(kind, binary, mock, runs, scratch) for kind, binary in binaries}

    print(f"{CHILDREN} children x `sleep 0.2`, spawned, waited for and closed by one parent, "
          f"vs the same {CHILDREN} commands one after another (median of {runs})\n")
    print(f"{'':8} {'collab':>9} {'sequential':>11} {'ratio':>7}   {'RSS collab':>11} "
          f"{'RSS seq':>8} {'per child':>10}")
    for kind, r in results.items():
        (cw, cr), (sw, sr) = r["collab"], r["sequential"]
        print(f"{kind:8} {cw * 1000:7.0f}ms {sw * 1000:9.0f}ms {cw / sw:6.2f}x   "
              f"{cr:9.1f}Mi {sr:6.1f}Mi {(cr - sr) / CHILDREN:8.2f}Mi")
    if "codex" in results:
        o, c = results["osprey"]["collab"], results["codex"]["collab"]
        print(f"\nosprey / codex, collab scenario: wall {o[0] / c[0]:.2f}x, "
              f"peak RSS {o[1] / c[1]:.2f}x")
    print("targets: collab <= 0.2x sequential; <= 2 MiB per child thread")


if __name__ == "__main__":
    main()
