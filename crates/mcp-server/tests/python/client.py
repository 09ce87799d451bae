"""An MCP client built on the official Python SDK (`mcp` on PyPI) that drives
`osprey-mcp-server` over stdio for the Rust end-to-end tests.

Usage: client.py SERVER_BINARY SCENARIO [ARGS...]

The server inherits this process's environment (OSPREY_HOME, the mock provider's key).
The script prints one JSON object on stdout describing what it saw; the Rust test asserts
on it. Scenarios:

  conversation CWD          list tools, start a thread, reply to it, reply to an unknown id
  approval CWD ANSWER       start a thread whose command needs approval; ANSWER is
                            accept | accept-session | decline | cancel | none (no
                            elicitation capability at all)
  cancel CWD                start a thread, cancel the call once the model has begun
                            answering, then reply
  concurrent CWD            start two threads at once
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from mcp import types
from mcp.client.extension import NotificationBinding
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# How long the script waits for notifications that must arrive (not a synchronisation sleep:
# the wait ends as soon as the expected event is seen).
WAIT_SECONDS = 30


class EventParams(BaseModel):
    model_config = ConfigDict(extra="allow")


TERMINAL = ("turn_completed", "turn_failed", "turn_aborted")


class Recorder:
    """Collects `osprey/event` notifications and progress reports."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.progress: list[dict[str, Any]] = []
        self._changed = anyio.Condition()

    def terminal_count(self) -> int:
        return sum(1 for e in self.events if e.get("msg", {}).get("type") in TERMINAL)

    async def on_event(self, params: EventParams) -> None:
        self.events.append(params.model_dump())
        async with self._changed:
            self._changed.notify_all()

    def progress_callback(self):
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append({"progress": progress, "total": total, "message": message})

        return on_progress

    async def wait_for(self, msg_type: str) -> dict[str, Any]:
        """The first event of this type, waiting for it if it has not arrived yet."""
        with anyio.fail_after(WAIT_SECONDS):
            async with self._changed:
                while True:
                    for event in self.events:
                        if event.get("msg", {}).get("type") == msg_type:
                            return event
                    await self._changed.wait()

    async def wait_terminal_events(self, count: int) -> None:
        """Waits until `count` terminal events were delivered (notifications are dispatched
        apart from responses, so they may trail the tool result)."""
        with anyio.fail_after(WAIT_SECONDS):
            async with self._changed:
                while self.terminal_count() < count:
                    await self._changed.wait()


def result_json(result: types.CallToolResult) -> dict[str, Any]:
    return {
        "isError": bool(result.is_error),
        "text": [c.text for c in result.content if isinstance(c, types.TextContent)],
        "structured": result.structured_content,
    }


def plain(value: Any) -> Any:
    """A pydantic model or a plain value, as JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True)
    return value


def make_elicitation_callback(answer: str, seen: list[dict[str, Any]]):
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        seen.append(
            {
                "message": params.message,
                "schema": plain(params.requested_schema),
                "meta": plain(getattr(params, "meta", None)),
            }
        )
        if answer == "accept":
            return types.ElicitResult(action="accept", content={})
        if answer == "accept-session":
            return types.ElicitResult(action="accept", content={"decision": "approved_for_session"})
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="cancel")

    return callback


async def run(server_bin: str, scenario: str, args: list[str]) -> dict[str, Any]:
    # OSPREY_MCP_SERVER_ARGS: arguments for the server binary (e.g. `mcp-server` when the
    # server is the `osprey` binary itself).
    server_args = os.environ.get("OSPREY_MCP_SERVER_ARGS", "").split()
    params = StdioServerParameters(command=server_bin, args=server_args, env=dict(os.environ))
    recorder = Recorder()
    binding = NotificationBinding(method="osprey/event", params_type=EventParams, handler=recorder.on_event)
    elicitations: list[dict[str, Any]] = []
    elicitation_callback = None
    if scenario == "approval" and args[1] != "none":
        elicitation_callback = make_elicitation_callback(args[1], elicitations)
    out: dict[str, Any] = {}
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(
            read,
            write,
            elicitation_callback=elicitation_callback,
            notification_bindings=[binding],
        ) as session:
            init = await session.initialize()
            out["serverInfo"] = init.server_info.model_dump()
            out["protocolVersion"] = init.protocol_version
            if scenario == "conversation":
                cwd = args[0]
                tools = await session.list_tools()
                out["tools"] = [t.model_dump(by_alias=True, exclude_none=True) for t in tools.tools]
                first = await session.call_tool(
                    "osprey",
                    {
                        "prompt": "first question",
                        "cwd": cwd,
                        "sandbox": "read-only",
                        "config": {"model": "model-from-config"},
                    },
                    progress_callback=recorder.progress_callback(),
                )
                out["first"] = result_json(first)
                thread_id = (first.structured_content or {}).get("threadId")
                second = await session.call_tool(
                    "osprey-reply", {"threadId": thread_id, "prompt": "second question"}
                )
                out["second"] = result_json(second)
                unknown = await session.call_tool(
                    "osprey-reply",
                    {"threadId": "00000000-0000-7000-8000-000000000000", "prompt": "hello?"},
                )
                out["unknown"] = result_json(unknown)
                bad = await session.call_tool("osprey", {"prompt": "x", "sandbox": "sometimes"})
                out["bad"] = result_json(bad)
                await recorder.wait_terminal_events(2)
            elif scenario == "approval":
                cwd = args[0]
                result = await session.call_tool(
                    "osprey",
                    {
                        "prompt": "make the marker",
                        "cwd": cwd,
                        "approval-policy": "untrusted",
                        "sandbox": "danger-full-access",
                    },
                )
                out["result"] = result_json(result)
                await recorder.wait_terminal_events(1)
            elif scenario == "cancel":
                cwd = args[0]
                cancelled: dict[str, Any] = {"returned": False}
                async with anyio.create_task_group() as tg:

                    async def doomed() -> None:
                        await session.call_tool("osprey", {"prompt": "take forever", "cwd": cwd})
                        cancelled["returned"] = True

                    tg.start_soon(doomed)
                    started = await recorder.wait_for("agent_message_delta")
                    tg.cancel_scope.cancel()
                out["cancelledCallReturned"] = cancelled["returned"]
                thread_id = started["_meta"]["threadId"]
                out["threadId"] = thread_id
                reply = await session.call_tool("osprey-reply", {"threadId": thread_id, "prompt": "are you there?"})
                out["reply"] = result_json(reply)
                await recorder.wait_terminal_events(2)
            elif scenario == "concurrent":
                cwd = args[0]
                results: dict[str, Any] = {}

                async def start(name: str) -> None:
                    r = await session.call_tool("osprey", {"prompt": f"task {name}", "cwd": cwd})
                    results[name] = result_json(r)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(start, "a")
                    tg.start_soon(start, "b")
                out["results"] = results
                await recorder.wait_terminal_events(2)
            else:
                raise SystemExit(f"unknown scenario {scenario!r}")
    out["events"] = recorder.events
    out["progress"] = recorder.progress
    out["elicitations"] = elicitations
    return out


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = anyio.run(run, sys.argv[1], sys.argv[2], sys.argv[3:])
    json.dump(out, sys.stdout, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
