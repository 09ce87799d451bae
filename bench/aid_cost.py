#!/usr/bin/env python3
"""What each harness aid costs, per task: the "all aids" runs against the runs with that one
aid switched off ("-aid"), from the JSON lines `local_tasks.py --mode aids` prints. An aid
that is off by default is measured the other way round: its "+aid" runs (switched on) against
the "all aids" runs (where it is off).

For every task an aid-off configuration ran, one row: the runs with all aids (solved/runs,
mean wall seconds of the solved runs, or of all when none solved), the runs without the aid
(the same), and the ratio of the two means —
above 1.20 the aid made that task more than 20 % slower (issue #17's limit), marked "slower".
A task solved with the aid and never without it, or the reverse, is marked as such instead: a
time ratio between a solve and a failure says little, since a failure ends when the model gives
up.

Usage: bench/aid_cost.py LOG [LOG ...]   (markdown on stdout)
"""

import json
import sys


def runs_in(logs):
    runs = []
    for log in logs:
        with open(log) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(r, dict) and "config" in r and "wall_s" in r:
                    runs.append(r)
    return runs


def summary(runs):
    """(solved, runs, mean wall of the solved runs or, when none solved, of all runs)."""
    solved = [r for r in runs if r["ok"]]
    timed = solved or runs
    return len(solved), len(runs), sum(r["wall_s"] for r in timed) / len(timed)


def verdict(with_aid, without):
    """The ratio of the mean wall times, and what the pair says. Where both sides solved the
    task, the means are of the solved runs only: a failed run ends when the model gives up
    or the time runs out, so it says nothing about how fast a solve is. A task solved only
    one way is marked as such; otherwise a ratio over 1.20 is "slower", and "slower,
    unsolved either way" when no run solved it."""
    (solved_with, _, mean_with), (solved_without, _, mean_without) = with_aid, without
    ratio = mean_with / mean_without
    if solved_with and not solved_without:
        return ratio, "solved only with it"
    if solved_without and not solved_with:
        return ratio, "solved only without it"
    if ratio > 1.2:
        return ratio, "slower" if solved_with else "slower, unsolved either way"
    return ratio, ""


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    runs = runs_in(sys.argv[1:])
    baseline = {}
    for r in runs:
        if r["config"] == "all aids":
            baseline.setdefault(r["task"], []).append(r)
    print("| aid switched | task | with the aid: solved, mean s | without it: solved, mean s "
          "| with / without | |")
    print("|---|---|---|---|---|---|")
    labels = sorted({r["config"] for r in runs if r["config"][:1] in "-+"})
    for label in labels:
        by_task = {}
        for r in runs:
            if r["config"] == label:
                by_task.setdefault(r["task"], []).append(r)
        for task, switched in by_task.items():
            if task not in baseline:
                continue
            with_aid, without = summary(baseline[task]), summary(switched)
            if label.startswith("+"):
                with_aid, without = without, with_aid
            ratio, marks = verdict(with_aid, without)
            print(f"| {label} | {task} | {with_aid[0]}/{with_aid[1]}, {with_aid[2]:.0f} "
                  f"| {without[0]}/{without[1]}, {without[2]:.0f} | {ratio:.2f} | {marks} |")


if __name__ == "__main__":
    main()
