"""The MCP server `client=anthropic_client` names in its requests: BrowseComp-Plus's searcher/mcp_server.py (at
commit 97c637c; fastmcp, a FastMCP named "search-server" over SSE at /mcp) serving the run's own `search` and
`get_document`, so Anthropic's servers call them through the Messages API's MCP connector.

It runs uvicorn in a thread of its own for the whole run (`RunResources.loaded`, closed with the run); each tool
call is a coroutine of the run's event loop, awaited from the server's. fastmcp is an optional extra
(`pip install 'ragbench[mcp]'`): the text of a tool's result is what fastmcp writes of the value the tool
returns (a list of hits, a document, nothing), as BrowseComp-Plus's server sends it.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from ragbench.api import ConfigError, Context, Document

from .prompts import GET_DOCUMENT_DESCRIPTION, SEARCH_DESCRIPTION
from .shapes import SearchHit
from .tools import document_value

NAME = "search-server"  # mcp_server.py's FastMCP name, anthropic_client's --mcp-name
PATH = "/mcp"
START_TIMEOUT = 60.0  # seconds for uvicorn to listen (it binds a socket, nothing more)


def check_installed() -> None:
    """A ConfigError with the install command where fastmcp is missing (before any example runs)."""
    if importlib.util.find_spec("fastmcp") is None or importlib.util.find_spec("uvicorn") is None:
        raise ConfigError(
            "search_agent: client=anthropic_client serves its tools over MCP with fastmcp: pip install 'ragbench[mcp]'"
        )


@dataclass(frozen=True)
class ServedTool:
    """One tool: its name, description, and the coroutine function of the run's loop that answers it (its
    parameters, as annotated, are the tool's input schema)."""

    name: str
    description: str
    function: Callable[..., Coroutine[Any, Any, Any]]


class ToolServer:
    """`tools` served over MCP (SSE at `PATH`) on `host:port` (0: a free port) under `name`, each call run in
    `loop` (the run's); `url` where it listens, `close()` stops it. Made in a thread (it waits for uvicorn)."""

    def __init__(
        self, name: str, tools: list[ServedTool], port: int, loop: asyncio.AbstractEventLoop, host: str = "127.0.0.1"
    ) -> None:
        check_installed()
        import uvicorn

        mcp = importlib.import_module("fastmcp").FastMCP(name=name)
        for tool in tools:
            mcp.tool(name=tool.name, description=tool.description)(in_loop(tool.function, loop))
        config = uvicorn.Config(mcp.http_app(path=PATH, transport="sse"), host=host, port=port, log_level="warning")
        self.host, self.server = host, uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="search_agent MCP server", daemon=True)
        self.thread.start()
        waiting = threading.Event()
        for _ in range(int(START_TIMEOUT / 0.05)):
            if self.server.started:
                return
            if not self.thread.is_alive():
                raise ConfigError(
                    f"search_agent: the MCP server could not listen on {host}:{port}: choose another "
                    "--system-arg mcp_port"
                )
            waiting.wait(0.05)
        self.close()
        raise ConfigError(f"search_agent: the MCP server did not start within {START_TIMEOUT:g}s")

    @property
    def url(self) -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://{self.host}:{port}{PATH}"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join()


def in_loop(function: Callable[..., Coroutine[Any, Any, Any]], loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    """`function` as a coroutine function of any loop, each call run in `loop`, with its signature (fastmcp reads
    the tool's parameters from it)."""

    @functools.wraps(function)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(function(*args, **kwargs), loop))

    return call


def fastmcp_text(value: Any) -> str | None:
    """The text fastmcp 2.9.2 answers a tool's return value with: its JSON (indent 2, not ASCII-escaped), a list
    of one item as that item; None (no content) for None or an empty list."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None or value == []:
        return None
    return json.dumps(value, ensure_ascii=False, indent=2)


def search_tools(
    k: int,
    offers_document: bool,
    hits_of: Callable[[str], Awaitable[tuple[list[SearchHit], list[Document]]]],
    lookup: Callable[[str], Document | None] | None,
    served: dict[str, Document],
) -> list[ServedTool]:
    """searcher/mcp_server.py's tools: `search` (the hits as a list, each search's documents kept in `served` by
    docid) and, with `offers_document`, `get_document` (the document, None for none). The functions are named as the
    tools and return without annotations (fastmcp names the function in its error for arguments that do not fit,
    and reads the annotations)."""

    async def search(query: str):  # type: ignore[no-untyped-def]  # (no return annotation: above)
        hits, docs = await hits_of(query)
        served.update((str(doc.id), doc) for doc in docs)
        return hits

    async def get_document(docid: str):  # type: ignore[no-untyped-def]
        return document_value(docid, None if lookup is None else lookup(docid))

    tools = [ServedTool("search", SEARCH_DESCRIPTION.format(k=k), search)]
    if offers_document:
        tools.append(ServedTool("get_document", GET_DOCUMENT_DESCRIPTION, get_document))
    return tools


async def started(ctx: Context, key: Any, tools: list[ServedTool], port: int) -> ToolServer:
    """The run's server under `key`, started at its first call (in a thread: it waits for uvicorn) and closed
    with the run."""
    if ctx.resources is None:
        raise ConfigError("search_agent: client=anthropic_client runs only in a ragbench run (it serves MCP)")
    loop = asyncio.get_running_loop()
    server: ToolServer = await asyncio.to_thread(ctx.resources.loaded, key, lambda: ToolServer(NAME, tools, port, loop))
    return server
