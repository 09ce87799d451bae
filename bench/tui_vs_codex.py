#!/usr/bin/env python3
"""Side-by-side benchmark: the `osprey` TUI vs the reference `codex` TUI, each in a real
pseudo-terminal (120×40) read through a vt100 emulator (pyte), against the same scripted
mock model, in the same run. Measured:

  launch          spawn → the composer's placeholder is on the screen
  key→frame idle  a key written → the screen shows it in the composer (p50, p99)
  key→frame busy  the same while a long markdown answer streams in
  idle writes     bytes the TUI writes in 5 s of doing nothing (target 0)
  RSS             of the TUI's process tree after N cells (a prompt and its answer are two;
                  for Codex this includes the app-server daemon it starts)
  harness floor   key → the pty's own echo with `cat` (no TUI): the part of key → frame
                  that is this harness's (the pty, the reader thread waking up; a key's
                  time ends when the bytes that show it are read, before they are parsed)

and, for osprey only, from its own per-frame log (OSPREY_TUI_FRAME_LOG, docs/tui.md), which
no harness noise reaches:

  in-TUI key → flushed   a key received by the app loop → its frame flushed to the pty
                         (idle, and while the long answer streams), p50/p99
  streaming frame time   rendering + writing one frame while the long answer streams, p50/p99
  idle frames            frames drawn in the 5 s idle window (target 0)

Both run with the same config (approval never, read-only, a trusted project folder) and
answer the terminal's queries (cursor position, colours, device attributes) as a terminal
would.

Usage: bench/tui_vs_codex.py OSPREY_BIN CODEX_BIN MOCK_BIN [--keys N] [--cells N]
"""

import fcntl
import os
import pty
import re
import shutil
import signal
import struct
import sys
import tempfile
import termios
import threading
import time

import pyte

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (answer_sse, median, pct, processes_under, start_mock,  # noqa: E402
                    tree_rss_kib, write_home)

ROWS, COLS = 40, 120
WAIT = 60.0
PLACEHOLDERS = {"osprey": "Ask Osprey to do anything", "codex": "Ask Codex to do anything"}
LONG_ANSWER = ["## Plan\n\n"] + [
    f"{i}. Step **{i}** touches `src/mod_{i}.rs` and explains why in one sentence.\n"
    for i in range(1, 120)
] + ["\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone."]
SHORT_ANSWER = ["Ok", "."]
QUERIES = [
    (b"\x1b[6n", None),                                     # cursor position: computed
    (b"\x1b]11;?\x1b\\", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
    (b"\x1b]11;?\x07", b"\x1b]11;rgb:0000/0000/0000\x07"),
    (b"\x1b]10;?\x1b\\", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]10;?\x07", b"\x1b]10;rgb:ffff/ffff/ffff\x07"),
    (b"\x1b[c", b"\x1b[?62;22c"),
]


class Tui:
    """A TUI in a pty; its output is fed to a pyte screen and time-stamped."""

    def __init__(self, argv, env, cwd):
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.written = 0
        self.read_at = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            os.execve(argv[0], argv, env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.pid, self.fd = pid, fd
        self.started = time.perf_counter()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        pending = b""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            # Stamped as soon as the bytes are read, so the time the waiting thread takes to
            # wake up (Python's thread hand-off) is not counted as the TUI's.
            read_at = time.perf_counter()
            with self.lock:
                self.read_at = read_at
                if not data:
                    self.written = -1
                    self.changed.notify_all()
                    return
                self.written += len(data)
                pending += data
                for query, answer in QUERIES:
                    while query in pending:
                        at = pending.index(query)
                        self.stream.feed(pending[:at])
                        pending = pending[at + len(query):]
                        if answer is None:
                            y, x = self.screen.cursor.y, self.screen.cursor.x
                            answer_now = f"\x1b[{y + 1};{x + 1}R".encode()
                        else:
                            answer_now = answer
                        os.write(self.fd, answer_now)
                # Keep a possibly cut escape sequence for the next read.
                cut = pending.rfind(b"\x1b")
                if cut >= 0 and len(pending) - cut < 16:
                    self.stream.feed(pending[:cut])
                    pending = pending[cut:]
                else:
                    self.stream.feed(pending)
                    pending = b""
                self.changed.notify_all()

    def text(self):
        return "\n".join(self.screen.display)

    def wait_for(self, what, pred, timeout=WAIT):
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                if pred("\n".join(self.screen.display)):
                    # When the bytes that made it true were read (the check runs after
                    # every read, so these are the latest).
                    return self.read_at
                if self.written < 0:
                    raise SystemExit(f"tui bench: the TUI exited while waiting for {what}; "
                                     "screen:\n" + "\n".join(self.screen.display))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"tui bench: timed out waiting for {what}; screen:\n"
                                     + "\n".join(self.screen.display))
                self.changed.wait(left)

    def wait_quiet(self, what, quiet=1.0, timeout=WAIT, start=None):
        """Waits until the TUI has written something since `start` (a byte count; by default
        now) and then nothing for `quiet` seconds (pyte does not follow every scrolling
        sequence, so finished cells are not searched for on the screen)."""
        if start is None:
            start = self.bytes_written()
        deadline = time.monotonic() + timeout
        last, last_change = start, time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.bytes_written()
            if now < 0:
                raise SystemExit(f"tui bench: the TUI exited while waiting for {what}")
            if now != last:
                last, last_change = now, time.monotonic()
            elif last != start and time.monotonic() - last_change >= quiet:
                return
        raise SystemExit(f"tui bench: timed out waiting for {what}; screen:\n" + self.text())

    def type(self, data):
        os.write(self.fd, data)

    def bytes_written(self):
        with self.lock:
            return self.written

    def close(self):
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def composer_shows(typed):
    pattern = re.compile(re.escape(typed) + r"\s*$", re.MULTILINE)
    return lambda text: bool(pattern.search(text))


def submit(tui, text):
    """Types `text`, waits until it shows, pauses (Codex treats a fast Enter after fast
    typing as part of a paste), then presses Enter; returns the bytes written before Enter."""
    tui.type(text.encode())
    tui.wait_for(f"{text!r} typed", composer_shows(text))
    time.sleep(0.3)
    # Counted before Enter: a fast TUI can finish a whole mock turn before the caller
    # looks again, and waiting for output after that would wait for nothing.
    before = tui.bytes_written()
    tui.type(b"\r")
    return before


def key_to_frame(tui, n, tag):
    """Types n distinct characters one at a time; each time, how long until it shows."""
    samples = []
    typed = tag
    tui.type(tag.encode())
    tui.wait_for("the first typed text", composer_shows(typed))
    for i in range(n):
        ch = "abcdefghijklmnopqrstuvwxyz"[i % 26]
        typed += ch
        sent = time.perf_counter()
        tui.type(ch.encode())
        shown = tui.wait_for(f"key {i}", composer_shows(typed))
        samples.append((shown - sent) * 1000)
    tui.type(b"\x7f" * len(typed))
    return samples


def harness_floor(scratch, keys):
    """Key → frame with no program drawing at all: `cat` in the pty, whose line discipline
    echoes each key. What this takes (the emulator's parse, Python's thread hand-off) is
    in every key → frame figure above it, for both TUIs."""
    work = tempfile.mkdtemp(prefix="floor-", dir=scratch)
    tui = Tui(["/bin/cat"], {"PATH": os.environ["PATH"], "TERM": "xterm-256color"}, work)
    try:
        return key_to_frame(tui, keys, "zq")
    finally:
        tui.close()


def run_one(kind, binary, mock_bin, scratch, keys, cells):
    work = tempfile.mkdtemp(prefix=f"work-{kind}-", dir=scratch)
    os.makedirs(os.path.join(work, ".git"))
    # The first request gets the long answer, every later one the short (--repeat starts
    # the script over, so the long one comes back only after every short one).
    script = [answer_sse("long", LONG_ANSWER)] + [answer_sse(f"r{i}", SHORT_ANSWER)
                                                  for i in range(max(1, cells))]
    mock, base_url = start_mock(mock_bin, script, scratch, "tui bench")
    # A trusted folder (no trust screen) and Codex's model-upgrade offer marked as seen.
    trust = (f'\n[projects."{work}"]\ntrust_level = "trusted"\n'
             '\n[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n')
    home = write_home(scratch, kind, base_url, extra=trust)
    env = {"PATH": os.environ["PATH"], "HOME": home, "SHELL": "/bin/bash",
           "TERM": "xterm-256color", "BENCH_API_KEY": "k", "OSPREY_HOME": home,
           "CODEX_HOME": home, "LANG": "C.UTF-8"}
    frame_log = os.path.join(scratch, f"frames-{kind}.log")
    if kind == "osprey":
        env["OSPREY_TUI_FRAME_LOG"] = frame_log
    marks = {}

    def mark(name):
        marks[name] = frame_count(frame_log)

    argv = [binary]
    out = {}
    tui = Tui(argv, env, work)
    try:
        shown = tui.wait_for("the composer", lambda t: PLACEHOLDERS[kind] in t)
        out["launch"] = (shown - tui.started) * 1000
        time.sleep(1.5)
        if "Use existing model" in tui.text():
            # Codex 0.171 offers a newer model once; keep the configured one.
            tui.type(b"2")
            time.sleep(0.3)
            if "Use existing model" in tui.text():
                tui.type(b"\r")
            tui.wait_for("the composer again", lambda t: PLACEHOLDERS[kind] in t)
            time.sleep(0.5)
        mark("idle_keys")
        out["idle"] = key_to_frame(tui, keys, "zq")
        time.sleep(0.5)
        mark("idle_wait")
        before = tui.bytes_written()
        time.sleep(5)
        out["idle_bytes"] = tui.bytes_written() - before
        mark("stream")
        # Busy: a long answer streams while keys are typed.
        submit(tui, "write the plan")
        tui.wait_for("the answer to start", lambda t: "Step" in t)
        mark("busy_keys")
        out["busy"] = key_to_frame(tui, min(keys, 40), "zz")
        mark("busy_keys_end")
        tui.wait_quiet("the answer to end", quiet=1.5, timeout=120)
        mark("stream_end")
        # Cells: prompt after prompt, each answered briefly (the mock repeats its script).
        for i in range(max(0, (cells - 2) // 2)):
            marker = f"p{i}x"
            sent = submit(tui, marker)
            tui.wait_quiet(f"prompt {i} to be answered", quiet=0.4, timeout=120, start=sent)
            if i % 50 == 0:
                sys.stderr.write(f"  {kind}: {2 * i + 2} cells\n")
        time.sleep(1)
        out["rss_kib"] = tree_rss_kib(tui.pid)
    finally:
        tui.close()
        mock.kill()
        # Codex 0.171's TUI starts a `codex app-server` daemon (its child, so in the RSS
        # above) that outlives it; it must not run on into the next measurement.
        for pid in processes_under(home):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if kind == "osprey":
        frames = read_frames(frame_log)

        def window(start, end):
            return frames[marks[start]:marks[end]]
        out["tui_idle"] = [wait for cause, wait, _ in window("idle_keys", "idle_wait")
                           if cause == "key"]
        out["tui_busy"] = [wait for cause, wait, _ in window("busy_keys", "busy_keys_end")
                           if cause == "key"]
        out["stream_draw"] = [draw for _, _, draw in window("stream", "stream_end")]
        out["idle_frames"] = len(window("idle_wait", "stream"))
    return out


def read_frames(path):
    """The osprey frame log's rows: (cause, input → flushed ms, draw ms)."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    rows.append((parts[0], int(parts[1]) / 1000, int(parts[2]) / 1000))
    except FileNotFoundError:
        pass
    return rows


def frame_count(path):
    return len(read_frames(path))


def main():
    # The reader thread must get the interpreter as soon as the pty has bytes; with the
    # default 5 ms switch interval it waited for the main thread's screen checks, and that
    # wait was in every key → frame figure (the floor's p50 was 5 ms).
    sys.setswitchinterval(0.0001)
    args = sys.argv[1:]
    if len(args) < 3:
        raise SystemExit(__doc__)
    osprey_bin, codex_bin, mock_bin = args[:3]
    keys, cells = 100, 1000
    rest = args[3:]
    while rest:
        flag, value = rest[0], rest[1]
        rest = rest[2:]
        if flag == "--keys":
            keys = int(value)
        elif flag == "--cells":
            cells = int(value)
        else:
            raise SystemExit(f"unknown flag {flag}")
    scratch = tempfile.mkdtemp(prefix="tui-bench-", dir=os.path.join(os.getcwd(), "target"))
    try:
        floor = harness_floor(scratch, keys)
        results = {}
        for kind, binary in (("osprey", osprey_bin), ("codex", codex_bin)):
            sys.stderr.write(f"{kind} …\n")
            results[kind] = run_one(kind, binary, mock_bin, scratch, keys, cells)
        o, c = results["osprey"], results["codex"]
        rows = [
            ("launch → editable composer", o["launch"], c["launch"], "ms"),
            ("key → frame, idle, p50", median(o["idle"]), median(c["idle"]), "ms"),
            ("key → frame, idle, p99", pct(o["idle"], 99), pct(c["idle"], 99), "ms"),
            ("key → frame, streaming, p50", median(o["busy"]), median(c["busy"]), "ms"),
            ("key → frame, streaming, p99", pct(o["busy"], 99), pct(c["busy"], 99), "ms"),
            ("bytes written in 5 s idle", o["idle_bytes"], c["idle_bytes"], "B"),
            (f"RSS after {cells} cells", o["rss_kib"] / 1024, c["rss_kib"] / 1024, "MiB"),
        ]
        print("| measure | osprey | codex | ratio |")
        print("|---|---|---|---|")
        for name, ours, theirs, unit in rows:
            ratio = f"{ours / theirs:.3f}" if theirs else "—"
            print(f"| {name} | {ours:.2f} {unit} | {theirs:.2f} {unit} | {ratio} |")
        print(f"| harness floor: key → the terminal's own echo (no program), p50 / p99 | "
              f"{median(floor):.2f} / {pct(floor, 99):.2f} ms | | |")
        print()
        print("osprey's own frame log (no harness in these):")
        print()
        print("| measure | p50 | p99 | max | n |")
        print("|---|---|---|---|---|")
        for name, values in (("key received → frame flushed, idle", o["tui_idle"]),
                             ("key received → frame flushed, streaming", o["tui_busy"]),
                             ("frame time while streaming", o["stream_draw"])):
            if values:
                print(f"| {name} | {median(values):.2f} ms | {pct(values, 99):.2f} ms | "
                      f"{max(values):.2f} ms | {len(values)} |")
            else:
                print(f"| {name} | — | — | — | 0 |")
        print(f"| frames drawn in 5 s idle | {o['idle_frames']} | | | |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
