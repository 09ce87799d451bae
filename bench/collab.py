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

Each command is `t=$(date +%s.%N) && sleep 0.2 && echo $t > DIR/done-…`, so every run proves
that 16 commands really ran (it fails unless DIR holds 16 done files afterwards), and each
file's content (when the command started) and mtime (when it ended) time the commands. The
children all get the same script from the catch-all route and cannot learn their number (the
mock has no placeholder for it: `{{agent:#N}}` names the N-th spawned agent, which the
children's first requests arrive too early to know), so their files get unique names from
`mktemp`; with the mock failing any thread that does not walk exactly its script (one command),
16 files mean 16 children that each ran the command once. The sequential commands are
`done-0` … `done-15`.

Osprey and Codex runs alternate (one round = Osprey collab, Codex collab, Osprey sequential,
Codex sequential; a first round is a discarded warm-up), so drifting machine load affects
both alike.

Reports, per binary, the median wall time of each scenario, their ratio, and the peak RSS of
the exec process (its children are threads in it) per child thread:
(collab - sequential) / 16; and, for the collab scenario, the median spread of the children's
command starts (last start - first start) and ends.

Usage: bench/collab.py OSPREY_BIN MOCK_BIN [CODEX_BIN] [--runs N]
"""

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import answer_sse, call_sse, peak_rss_run, start_mock, stop_mock, write_home  # noqa: E402

CHILDREN = 16


def command(done_file):
    """`sleep 0.2`, then a done file holding the command's start time (its mtime: the end)."""
    return {"cmd": f't=$(date +%s.%N) && sleep 0.2 && echo "$t" > {done_file}'}


def collab_scripts(namespace, done_dir):
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
    done = f'"$(mktemp {done_dir}/done-XXXXXX)"'
    child = [call_sse("c1", [("c1", "exec_command", command(done))]),
             answer_sse("c2", ["slept"])]
    return parent, {"*": child}


def sequential_script(done_dir):
    """The same 16 commands, one per model response, so they run one after another."""
    script = [call_sse(f"s{i}", [(f"s{i}", "exec_command", command(f"{done_dir}/done-{i}"))])
              for i in range(CHILDREN)]
    return script + [answer_sse("s-end", ["All commands finished."])], {}


def done_times(kind, name, done_dir, stdout):
    """(start, end) epoch seconds of each command from its done file; fails unless there are
    exactly 16."""
    files = sorted(os.listdir(done_dir))
    if len(files) != CHILDREN:
        raise SystemExit(f"collab: {kind} {name} run left {len(files)} done files in {done_dir}, "
                         f"not {CHILDREN}: not every command ran. The run's last output:\n"
                         f"{stdout[-3000:]}")
    times = []
    for f in files:
        path = os.path.join(done_dir, f)
        with open(path) as fh:
            text = fh.read().strip()
        try:
            start = float(text)
        except ValueError:
            raise SystemExit(f"collab: {kind} {name}: {path} should hold the command's start "
                             f"time, but holds {text!r}") from None
        times.append((start, os.stat(path).st_mtime))
    return times


def run_once(kind, binary, mock, name, scratch):
    """Wall time (s), peak RSS (MiB) and the commands' (start, end) times, relative to the
    launch of exec, of one `exec --json` run on a fresh mock."""
    done_dir = tempfile.mkdtemp(prefix=f"done-{kind}-{name}-", dir=scratch)
    if name == "collab":
        scenario = collab_scripts(None if kind == "osprey" else "multi_agent_v1", done_dir)
    else:
        scenario = sequential_script(done_dir)
    script, routes = scenario
    proc, base_url = start_mock(mock, script, scratch, what=f"collab ({kind} {name})",
                                routes=routes, repeat=False)
    try:
        model = "gpt-5.6-luna" if kind == "codex" else "gpt-5.5"
        extra = f"[agents]\nmax_concurrent_threads_per_session = {CHILDREN}\n"
        home = write_home(scratch, kind, base_url, extra=extra, model=model,
                          sandbox="danger-full-access")
        cwd = tempfile.mkdtemp(prefix=f"cwd-{kind}-", dir=scratch)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "OSPREY_HOME": home,
               "CODEX_HOME": home, "BENCH_API_KEY": "k", "SHELL": "/bin/bash", "NO_COLOR": "1"}
        argv = [binary, "exec", "--json", "--skip-git-repo-check", "go"]
        launched = time.time()
        wall, rss, done = peak_rss_run(argv, env, cwd)
        if done.returncode != 0:
            raise SystemExit(f"collab: {kind} {name} exec failed (exit {done.returncode}):\n"
                             f"{done.stderr[-3000:]}")
        if routes and "collab_tool_call" not in done.stdout:
            raise SystemExit(f"collab: {kind} made no collaboration calls:\n{done.stdout[-3000:]}")
        times = [(s - launched, e - launched)
                 for s, e in done_times(kind, name, done_dir, done.stdout)]
    finally:
        stop_mock(proc, scratch, what=f"collab ({kind} {name})")
    return wall, rss, times


def measure(binaries, mock, runs, scratch):
    """Alternates the binaries run by run (a first round is a warm-up); returns
    {kind: {scenario: [(wall, rss, times), …]}}."""
    out = {kind: {"collab": [], "sequential": []} for kind, _ in binaries}
    for round_ in range(runs + 1):
        for name in ("collab", "sequential"):
            for kind, binary in binaries:
                sample = run_once(kind, binary, mock, name, scratch)
                if round_ > 0:
                    out[kind][name].append(sample)
    return out


def spreads(samples):
    """Medians over runs of: first command start after launch, start spread, end spread."""
    first = statistics.median(min(s for s, _ in t) for _, _, t in samples)
    starts = statistics.median(max(s for s, _ in t) - min(s for s, _ in t) for _, _, t in samples)
    ends = statistics.median(max(e for _, e in t) - min(e for _, e in t) for _, _, t in samples)
    return first, starts, ends


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
    load = os.getloadavg()
    samples = measure(binaries, mock, runs, scratch)
    load_end = os.getloadavg()

    def med(kind, name, i):
        return statistics.median(s[i] for s in samples[kind][name])

    print(f"{CHILDREN} children x `sleep 0.2`, spawned, waited for and closed by one parent, "
          f"vs the same {CHILDREN} commands one after another (median of {runs}, "
          f"binaries alternating; load {load[0]:.1f} at start, {load_end[0]:.1f} at end; "
          f"every run checked for {CHILDREN} done files)\n")
    print(f"{'':8} {'collab':>9} {'sequential':>11} {'ratio':>7}   {'RSS collab':>11} "
          f"{'RSS seq':>8} {'per child':>10}")
    for kind, _ in binaries:
        cw, cr = med(kind, "collab", 0), med(kind, "collab", 1)
        sw, sr = med(kind, "sequential", 0), med(kind, "sequential", 1)
        print(f"{kind:8} {cw * 1000:7.0f}ms {sw * 1000:9.0f}ms {cw / sw:6.2f}x   "
              f"{cr:9.1f}Mi {sr:6.1f}Mi {(cr - sr) / CHILDREN:8.2f}Mi")
    print("\ncollab scenario, the children's commands (from the done files; median of runs):")
    print(f"{'':8} {'1st start':>10} {'start spread':>13} {'end spread':>11}")
    for kind, _ in binaries:
        first, starts, ends = spreads(samples[kind]["collab"])
        print(f"{kind:8} {first * 1000:8.0f}ms {starts * 1000:11.0f}ms {ends * 1000:9.0f}ms")
    if len(binaries) == 2:
        o = (med("osprey", "collab", 0), med("osprey", "collab", 1))
        c = (med("codex", "collab", 0), med("codex", "collab", 1))
        print(f"\nosprey / codex, collab scenario: wall {o[0] / c[0]:.2f}x, "
              f"peak RSS {o[1] / c[1]:.2f}x")
    print("targets: collab <= 0.2x sequential; <= 2 MiB per child thread")


if __name__ == "__main__":
    main()
