"""Sandbox overhead through `osprey sandbox` (see bench/sandbox.sh).

Cases run interleaved, one run of each per round, so load from other processes falls on
all of them alike. Fixtures live under $OSPREY_BENCH_DIR (default /var/tmp), never /tmp:
`workspace-write` makes /tmp writable, and a writable root there would not be a fair
"no guard" case.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

osprey = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
# Where the fixtures go. File creation on a busy disk costs far more than the sandbox does;
# point this at a tmpfs (not under /tmp) to see the sandbox's share.
parent = os.environ.get("OSPREY_BENCH_DIR", "/var/tmp")

base = tempfile.mkdtemp(prefix="osprey-sbx-bench-", dir=parent)
plain = os.path.join(base, "plain")          # no .git, no .osprey: the guard runs
repo = os.path.join(base, "repo")            # both present: read-only mounts, no guard
for d in (plain, os.path.join(repo, ".git"), os.path.join(repo, ".osprey")):
    os.makedirs(d)

no_tmp = ["--exclude-tmpdir-env-var", "--exclude-slash-tmp"]
sandbox = [osprey, "sandbox"]
true_cases = [
    ("bare `true`", plain, ["true"]),
    ("osprey sandbox, danger-full-access", plain,
     sandbox + ["--policy", "danger-full-access", "--", "true"]),
    ("read-only (Landlock, ro mounts)", plain,
     sandbox + ["--policy", "read-only", "--", "true"]),
    ("workspace-write, .git+.osprey exist", repo,
     sandbox + ["--policy", "workspace-write", *no_tmp, "--", "true"]),
    ("workspace-write + creation guard", plain,
     sandbox + ["--policy", "workspace-write", "--", "true"]),
    ("workspace-write, bubblewrap + guard", plain,
     sandbox + ["--policy", "workspace-write", "--backend", "bubblewrap", "--", "true"]),
]
create = "for i in $(seq 200); do : > f$i; done; rm -f f*"
# (name, cwd, confinement flags): each runs `true` and the creation script, so the cost of
# the creations is the difference, free of the sandbox's start-up.
create_configs = [
    ("unconfined", plain, ["--policy", "danger-full-access"]),
    ("workspace-write, no guard", repo, ["--policy", "workspace-write", *no_tmp]),
    ("workspace-write, guard", plain, ["--policy", "workspace-write"]),
]
create_cases = []
for name, cwd, flags in create_configs:
    create_cases.append((f"{name}: true", cwd, sandbox + flags + ["--", "true"]))
    create_cases.append((f"{name}: 200 creations", cwd, sandbox + flags + ["--", "sh", "-c", create]))


def time_one(cwd, argv):
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{argv} failed ({done.returncode}): {done.stdout.decode()}{done.stderr.decode()}")
    return elapsed * 1e3


def measure(cases, n):
    times = [[] for _ in cases]
    for _ in range(n):
        for i, (_, cwd, argv) in enumerate(cases):
            times[i].append(time_one(cwd, argv))
    return [statistics.median(t) for t in times]


try:
    print(f"{runs} interleaved runs each; median wall time per spawn+wait (ms)")
    medians = measure(true_cases, runs)
    unconfined = medians[1]
    for (name, _, _), m in zip(true_cases, medians):
        extra = "" if name.startswith("bare") else f"   ({m - unconfined:+.2f} vs unconfined osprey)"
        print(f"{name:<40} {m:8.2f}{extra}")
    n = max(runs // 4, 10)
    print(f"\n{n} interleaved runs each of `true` and `sh -c '{create}'`")
    medians = measure(create_cases, n)
    costs = [medians[i + 1] - medians[i] for i in range(0, len(medians), 2)]
    for (name, _, _), cost in zip(create_configs, costs):
        per = (cost - costs[0]) / 200 * 1e3
        print(f"{name:<40} {cost:8.2f} ms for 200   ({per:+.1f} µs per creation vs unconfined)")
finally:
    shutil.rmtree(base, ignore_errors=True)
