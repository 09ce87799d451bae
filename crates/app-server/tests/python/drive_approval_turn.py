#!/usr/bin/env python3
"""Drive one app-server turn with approvals through a published third-party client.

Usage:
    drive_approval_turn.py [--server-stderr FILE] <cwd> -- <server command...>

The client is the PyPI package `codex-app-server-sdk` (pinned by
scripts/install-test-deps.sh, which exports OSPREY_PY_APPSERVER, the venv's python).
Everything below goes through that library's public API, unchanged: it starts the
server command on stdio, initializes, starts a thread in <cwd> with approval policy
`untrusted` and sandbox `workspace-write`, runs the turn "make the notes", and answers
the server's approval requests from its approval handler: the first command approval
with `acceptForSession`, later command approvals with `accept`, every file-change
approval with `accept`.

On success it prints ONE JSON object on stdout:
    {"threadId", "turnStatus", "approvals": [{"method", "itemId", "decision"}],
     "itemTypes": [types of item/completed, in order], "agentText": final agent message,
     "notificationMethods": [distinct notification methods, first-seen order]}
The notifications are those the library routes to the turn (ChatResult.raw_events:
everything carrying the turn's id); thread-level ones such as thread/status/changed
or serverRequest/resolved are consumed inside the library and not exposed by it.

Any protocol error, a turn that does not complete, a turn without a command approval,
or 60 s without the turn finishing ends the script with a message on stderr and exit
status 1 (2 for a bad command line). The library discards the server's stderr;
--server-stderr FILE keeps it by starting the command through /bin/sh with stderr
appended to FILE.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib import metadata
from typing import Any

from codex_app_server_sdk import (
    ApprovalRequest,
    CodexClient,
    CodexError,
    CommandApprovalRequest,
    FileChangeApprovalRequest,
    ThreadConfig,
)

DISTRIBUTION = "codex-app-server-sdk"
PROMPT = "make the notes"
TIMEOUT_SECONDS = 60.0
# Each request is answered well within this; a longer wait is a server that hangs.
REQUEST_TIMEOUT_SECONDS = 30.0
COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_CHANGE_APPROVAL = "item/fileChange/requestApproval"
# The library's decision names and the wire values it sends for them.
WIRE_DECISION = {
    "accept": "accept",
    "accept_for_session": "acceptForSession",
    "decline": "decline",
    "cancel": "cancel",
}

USAGE = "usage: drive_approval_turn.py [--server-stderr FILE] <cwd> -- <server command...>"


class DriverError(Exception):
    """A failure this script reports on stderr before exiting 1."""


def parse_args(argv: list[str]) -> tuple[str, list[str], str | None]:
    if "--" not in argv:
        raise ValueError("missing `--` before the server command")
    split = argv.index("--")
    before, command = argv[:split], argv[split + 1 :]
    stderr_file = None
    if len(before) >= 2 and before[0] == "--server-stderr":
        stderr_file = before[1]
        before = before[2:]
    if len(before) != 1:
        raise ValueError("expected exactly one <cwd> before `--`")
    if not command:
        raise ValueError("no server command after `--`")
    return before[0], command, stderr_file


def with_stderr_file(command: list[str], path: str) -> list[str]:
    # $0 is the file, "$@" the command: no quoting of the command is needed.
    return ["/bin/sh", "-c", 'exec "$@" 2>>"$0"', path, *command]


class ApprovalRecorder:
    """The approval handler: decides, and records what it answered, in order."""

    def __init__(self) -> None:
        self.approvals: list[dict[str, str]] = []
        self.command_approvals = 0

    async def __call__(self, request: ApprovalRequest) -> str:
        if isinstance(request, CommandApprovalRequest):
            method = COMMAND_APPROVAL
            decision = "accept_for_session" if self.command_approvals == 0 else "accept"
            self.command_approvals += 1
        elif isinstance(request, FileChangeApprovalRequest):
            method = FILE_CHANGE_APPROVAL
            decision = "accept"
        else:  # The library only hands these two kinds to the handler.
            raise DriverError(f"unexpected approval request type {type(request).__name__}")
        self.approvals.append(
            {"method": method, "itemId": request.item_id, "decision": WIRE_DECISION[decision]}
        )
        return decision


def distinct_in_order(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def ignore_library_leftovers(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    # After a failure the library leaves futures failed with its own errors unretrieved;
    # the error itself has been reported already.
    if isinstance(context.get("exception"), CodexError):
        return
    loop.default_exception_handler(context)


def ignore_closed_loop_in_finalizers(unraisable: Any) -> None:
    # A subprocess transport finalized after asyncio.run() closed the loop complains
    # about the closed loop; the server process has been reaped by then.
    value = unraisable.exc_value
    if isinstance(value, RuntimeError) and str(value) == "Event loop is closed":
        return
    sys.__unraisablehook__(unraisable)


class Progress:
    """Which step the driver is waiting on, for error messages."""

    def __init__(self) -> None:
        self.step = "starting the server"


async def drive(cwd: str, command: list[str], progress: Progress) -> dict[str, Any]:
    asyncio.get_running_loop().set_exception_handler(ignore_library_leftovers)
    recorder = ApprovalRecorder()
    client = CodexClient.connect_stdio(
        command=command,
        cwd=cwd,
        request_timeout=REQUEST_TIMEOUT_SECONDS,
        inactivity_timeout=TIMEOUT_SECONDS,
    )
    client.set_approval_handler(recorder)
    async with client:
        progress.step = "initialize"
        await client.initialize()
        progress.step = "thread/start"
        thread = await client.start_thread(
            ThreadConfig(cwd=cwd, approval_policy="untrusted", sandbox="workspace-write")
        )
        progress.step = f"the turn {PROMPT!r} (turn/start until turn/completed)"
        result = await thread.chat_once(PROMPT)
    progress.step = "checking the turn's events"

    events = result.raw_events
    notifications = [e for e in events if "id" not in e and isinstance(e.get("method"), str)]
    completed_turns = [e for e in notifications if e["method"] == "turn/completed"]
    if not completed_turns:
        raise DriverError("the library returned without a turn/completed notification")
    turn = completed_turns[-1].get("params", {}).get("turn", {})
    item_types = [
        e["params"]["item"].get("type")
        for e in notifications
        if e["method"] == "item/completed" and isinstance(e.get("params", {}).get("item"), dict)
    ]
    if recorder.command_approvals == 0:
        raise DriverError(
            f"the turn completed without any {COMMAND_APPROVAL} request; "
            "the server must ask before running the command under approval policy `untrusted`"
        )
    return {
        "threadId": result.thread_id,
        "turnStatus": turn.get("status"),
        "approvals": recorder.approvals,
        "itemTypes": item_types,
        "agentText": result.final_text,
        "notificationMethods": distinct_in_order([e["method"] for e in notifications]),
    }


def main(argv: list[str]) -> int:
    try:
        cwd, command, stderr_file = parse_args(argv)
    except ValueError as err:
        sys.stderr.write(f"drive_approval_turn: {err}\n{USAGE}\n")
        return 2
    shown = " ".join(command)
    if stderr_file is not None:
        command = with_stderr_file(command, stderr_file)
    sys.unraisablehook = ignore_closed_loop_in_finalizers
    progress = Progress()
    client_name = f"{DISTRIBUTION} {metadata.version(DISTRIBUTION)}"
    try:
        output = asyncio.run(asyncio.wait_for(drive(cwd, command, progress), TIMEOUT_SECONDS))
    except TimeoutError:
        sys.stderr.write(
            f"drive_approval_turn: {client_name} against `{shown}`: {progress.step} did "
            f"not finish within {TIMEOUT_SECONDS:.0f} s in all; the server hangs or never "
            "sent the message that ends this step\n"
        )
        return 1
    except (CodexError, DriverError) as err:
        sys.stderr.write(
            f"drive_approval_turn: {client_name} against `{shown}` failed during "
            f"{progress.step}: {type(err).__name__}: {err}\n"
        )
        return 1
    sys.stdout.write(json.dumps(output, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
