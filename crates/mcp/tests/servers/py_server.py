"""A small MCP server on the official Python SDK, used by osprey-mcp's integration tests.

Run: python py_server.py stdio
     python py_server.py http            (streamable HTTP on 127.0.0.1:<free port>/mcp)

With `http`, it prints `READY <port>` on stdout once it accepts connections, so a test learns
the port and waits for that line instead of sleeping.
"""

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("osprey-test-py", instructions="Test tools for Osprey's MCP client.")
state = {"cancelled": 0}


@server.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return str(a + b)


@server.tool()
def whoami(ctx: Context) -> str:
    """Reports the Authorization and X-Osprey-Test headers of the HTTP request."""
    headers = ctx.headers or {}
    return f"authorization={headers.get('authorization', '-')} x-osprey-test={headers.get('x-osprey-test', '-')}"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers; counts how often it was cancelled."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        state["cancelled"] += 1
        raise
    return "done"


@server.tool()
def cancelled_count() -> str:
    """How many `slow` calls were cancelled so far."""
    return str(state["cancelled"])


@server.tool()
def crash() -> str:
    """Exits the server process at once, as a crashing server would."""
    import os

    os._exit(7)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    uv = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(uv.serve())
        while not uv.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.01)
        port = uv.servers[0].sockets[0].getsockname()[1]
        print(f"READY {port}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
