#!/usr/bin/env python3
"""Side-by-side benchmark: `osprey app-server` vs the reference `codex app-server`.

Both servers speak JSON-RPC over stdio to this driver and talk to the same scripted mock model
(`osprey-mock-model --repeat`, 127.0.0.1), in the same run, so the numbers compare as ratios
(osprey / codex). Measured:

  startup        spawn → the `initialize` response (a fresh process each run)
  turn/started   `turn/start` written → `turn/started` read (one thread, turn after turn)
  first delta    `turn/start` written → the first `item/agentMessage/delta` read; the mock
                 sends its first text delta as soon as the request arrives, so this is the
                 model's first delta → the delta on the wire, plus the request's own cost
  idle thread    server RSS after `thread/start` of N threads minus before, divided by N
  active peak    peak RSS while M threads run a turn at once on one connection (each answer
                 arrives after a delay, so the turns overlap)

RSS is read from /proc (VmRSS of the server and any children it has), sampled every 5 ms
during the active turns. Times are medians over the runs; memory figures are medians over
three fresh servers.

Usage: bench/app_server_vs_codex.py OSPREY_BIN CODEX_BIN MOCK_BIN [--runs N] [--threads N]
       [--active M]
"""

import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import answer_sse as common_answer_sse  # noqa: E402
from common import start_mock, tree_rss_kib, write_home  # noqa: E402

WAIT = 60.0
ANSWER = ["Hello", " from", " the", " mock", " model", "."]
ACTIVE_DELAY_MS = 400


def answer_sse(rid):
    """A streamed assistant message of six text deltas."""
    return common_answer_sse(rid, ANSWER)


class Server:
    """One app server on stdio; every line it writes is parsed and time-stamped on arrival."""

    def __init__(self, kind, binary, home, work, scratch):
        self.kind = kind
        self.stderr_path = os.path.join(scratch, f"{kind}-{time.monotonic_ns()}.err")
        env = {"PATH": os.environ["PATH"], "HOME": home, "SHELL": "/bin/bash",
               "BENCH_API_KEY": "k", "NO_COLOR": "1", "OSPREY_HOME": home,
               "CODEX_HOME": home}
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen([binary, "app-server"], cwd=work, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.stderr_path, "w"))
        self.inbox = queue.Queue()
        self.pending = []
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            now = time.perf_counter()
            try:
                self.inbox.put((now, json.loads(line)))
            except json.JSONDecodeError:
                self.inbox.put((now, {"unparsed": line.decode(errors="replace")}))
        self.inbox.put((time.perf_counter(), None))

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        sent = time.perf_counter()
        self.send({"id": rid, "method": method, "params": params})
        return rid, sent

    def wait(self, what, pred):
        """The first message (pending ones first) matching `pred`, with its arrival time."""
        for i, (at, m) in enumerate(self.pending):
            if pred(m):
                del self.pending[i]
                return at, m
        deadline = time.monotonic() + WAIT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.fail(f"timed out after {WAIT:.0f} s waiting for {what}")
            try:
                at, m = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                self.fail(f"the server exited while the bench waited for {what}")
            if "id" in m and "method" in m:
                # A server request this bench does not expect (approvals are off).
                self.fail(f"unexpected server request {m['method']}")
            if pred(m):
                return at, m
            self.pending.append((at, m))

    def response(self, rid):
        at, m = self.wait(f"the response to request {rid}",
                          lambda m: m.get("id") == rid and "method" not in m)
        if "error" in m:
            self.fail(f"request {rid} failed: {m['error'].get('message')}")
        return at, m["result"]

    def call(self, method, params):
        rid, _ = self.request(method, params)
        return self.response(rid)[1]

    def initialize(self):
        rid, _ = self.request("initialize", {"clientInfo": {
            "name": "osprey-bench", "title": None, "version": "0.0.1"}})
        at, _ = self.response(rid)
        self.send({"method": "initialized"})
        return at

    def start_thread(self, work):
        result = self.call("thread/start", {"cwd": work, "approvalPolicy": "never",
                                            "sandbox": "read-only"})
        tid = result["thread"]["id"]
        self.wait("thread/started", lambda m: m.get("method") == "thread/started"
                  and m["params"]["thread"]["id"] == tid)
        return tid

    def start_turn(self, tid):
        rid, sent = self.request("turn/start", {"threadId": tid, "input": [
            {"type": "text", "text": "say hello", "text_elements": []}]})
        return rid, sent

    def turn_completed(self, tid):
        _, m = self.wait("turn/completed", lambda m: m.get("method") == "turn/completed"
                         and m["params"]["threadId"] == tid)
        status = m["params"]["turn"]["status"]
        if status != "completed":
            self.fail(f"a turn ended {status}: {m['params']['turn'].get('error')}")

    def drain(self, seconds):
        """Reads what arrives for `seconds` (notifications sent after a reply)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                at, m = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            if m is None:
                self.fail("the server exited")
            self.pending.append((at, m))
        self.pending.clear()

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def fail(self, message):
        self.proc.kill()
        raise SystemExit(f"app_server bench: {self.kind} app-server: {message}; its stderr "
                         f"is in {self.stderr_path}")


def measure_startup(kind, binary, home, work, scratch, runs):
    times = []
    for _ in range(runs + 1):
        server = Server(kind, binary, home, work, scratch)
        at = server.initialize()
        times.append(at - server.started_at)
        server.close()
    return statistics.median(times[1:])


def measure_turns(kind, binary, home, work, scratch, runs):
    server = Server(kind, binary, home, work, scratch)
    server.initialize()
    tid = server.start_thread(work)
    started, first_delta = [], []
    for _ in range(runs + 1):
        _, sent = server.start_turn(tid)
        at, _ = server.wait("turn/started", lambda m: m.get("method") == "turn/started")
        started.append(at - sent)
        at, _ = server.wait("item/agentMessage/delta",
                            lambda m: m.get("method") == "item/agentMessage/delta")
        first_delta.append(at - sent)
        server.turn_completed(tid)
        server.drain(0.05)
    server.close()
    return statistics.median(started[1:]), statistics.median(first_delta[1:])


def measure_idle_threads(kind, binary, home, work, scratch, threads):
    server = Server(kind, binary, home, work, scratch)
    server.initialize()
    # One thread first: what the first one loads (the model client, tool specs) is not per
    # thread.
    server.start_thread(work)
    server.drain(1.0)
    before = tree_rss_kib(server.proc.pid)
    for _ in range(threads):
        server.start_thread(work)
    server.drain(1.0)
    after = tree_rss_kib(server.proc.pid)
    server.close()
    return (after - before) / threads


def measure_active(kind, binary, home, work, scratch, active):
    server = Server(kind, binary, home, work, scratch)
    server.initialize()
    tids = [server.start_thread(work) for _ in range(active)]
    server.drain(0.5)
    idle = tree_rss_kib(server.proc.pid)
    peak = [idle]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_kib(server.proc.pid))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for tid in tids:
        server.start_turn(tid)
    for tid in tids:
        server.turn_completed(tid)
    done.set()
    sampler.join()
    server.close()
    return idle, peak[0]


def mib(kib):
    return kib / 1024.0


def main():
    args = sys.argv[1:]
    opts = {"--runs": 20, "--threads": 10, "--active": 20}
    for flag in list(opts):
        if flag in args:
            i = args.index(flag)
            opts[flag] = int(args[i + 1])
            del args[i:i + 2]
    if len(args) != 3:
        raise SystemExit(__doc__)
    osprey, codex, mock = (os.path.abspath(a) for a in args)
    runs, threads, active = opts["--runs"], opts["--threads"], opts["--active"]
    scratch = tempfile.mkdtemp(prefix="bench-app-server-")
    work = os.path.join(scratch, "work")
    os.makedirs(work)
    subprocess.run(["git", "init", "-q", work], check=True)
    servers = (("osprey", osprey), ("codex", codex))
    results = {kind: {} for kind, _ in servers}

    quick, quick_url = start_mock(mock, [answer_sse("r1")], scratch)
    slow, slow_url = start_mock(
        mock, [{"delayed": {"delay_ms": ACTIVE_DELAY_MS, "response": answer_sse("r2")}}],
        scratch)
    try:
        for kind, binary in servers:
            home = write_home(scratch, kind, quick_url)
            r = results[kind]
            r["startup"] = measure_startup(kind, binary, home, work, scratch, runs)
            r["turn/started"], r["first delta"] = measure_turns(
                kind, binary, home, work, scratch, runs)
            r["idle thread"] = statistics.median(
                measure_idle_threads(kind, binary, home, work, scratch, threads)
                for _ in range(3))
            slow_home = write_home(scratch, kind, slow_url)
            samples = [measure_active(kind, binary, slow_home, work, scratch, active)
                       for _ in range(3)]
            r["active idle"] = statistics.median(s[0] for s in samples)
            r["active peak"] = statistics.median(s[1] for s in samples)
    finally:
        for proc in (quick, slow):
            proc.terminate()
            proc.wait()

    o, c = results["osprey"], results["codex"]
    print(f"times: median of {runs} runs; memory: median of 3 servers; "
          f"ratio = osprey / codex (target <= 0.2)\n")
    print(f"{'measure':40} {'osprey':>11} {'codex':>11} {'ratio':>7}")
    for key, label in (("startup", "startup → initialize response"),
                       ("turn/started", "turn/start → turn/started"),
                       ("first delta", "turn/start → first agentMessage delta")):
        print(f"{label:40} {o[key]*1000:8.2f} ms {c[key]*1000:8.2f} ms "
              f"{o[key]/c[key]:7.3f}")
    print(f"{f'RSS per idle loaded thread (N={threads})':40} "
          f"{o['idle thread']:7.0f} KiB {c['idle thread']:7.0f} KiB "
          f"{o['idle thread']/c['idle thread'] if c['idle thread'] else float('nan'):7.3f}")
    print(f"{f'RSS with {active} threads idle':40} {mib(o['active idle']):7.1f} MiB "
          f"{mib(c['active idle']):7.1f} MiB {o['active idle']/c['active idle']:7.3f}")
    print(f"{f'peak RSS, {active} turns at once':40} {mib(o['active peak']):7.1f} MiB "
          f"{mib(c['active peak']):7.1f} MiB {o['active peak']/c['active peak']:7.3f}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
