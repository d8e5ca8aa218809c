"""The clients whose tools the API's own servers call (BrowseComp-Plus's anthropic_client and
openai_client_with_mcp): the run's MCP server serves `search` and `get_document` (mcp_server.py), each question
is one request naming it (a paused Messages answer asked again), and the run file is read from the answer."""

from __future__ import annotations

from typing import Any

from ragbench.api import ConfigError, Context, Document, Example, Prediction
from ragbench.api.engines import Engine

from . import anthropic_client, mcp_server, openai_mcp_client
from .qwen_client import Search

ENGINES = {  # the client -> what it sends, and the engine that sends it
    "anthropic_client": ("the Messages API's MCP connector", "--model anthropic:MODEL"),
    "openai_client_with_mcp": ("the Responses API's remote mcp tool", "--model openai:MODEL --model-arg api=responses"),
}


def check_engine(client: str, engine: Engine) -> None:
    """A ConfigError, before the run, where `engine` cannot send a remote MCP server."""
    if not engine.connects_mcp:
        what, fix = ENGINES[client]
        raise ConfigError(
            f"search_agent: client={client} sends {what}, which the {engine.kind} engine cannot send; run the "
            f"model with {fix}"
        )


async def run_example(
    agent: Any, example: Example, ctx: Context, question: dict[str, str], search: Search, lookup: Any
) -> Prediction:
    """One example of `agent` (a SearchAgent of such a client): its request(s), with the run's MCP server (its
    first example starts it), and the prediction from the run file."""
    tools = mcp_server.search_tools(agent.k, agent.get_document, search, lookup, agent._served)
    server = await mcp_server.started(ctx, ("search_agent mcp server", id(agent)), tools, agent.mcp_port)
    turns = [{"role": "system", "content": agent.system_prompt}] if agent.system_prompt else []
    sampling = agent._sampling(agent.token_budget, ctx.llm.engine.served_model)
    url = agent.mcp_url or server.url
    if agent.client == "anthropic_client":
        run = await anthropic_client.run_agent(ctx, turns + [question], url, sampling, agent.max_pause_attempts)
        record = anthropic_client.run_record(run)
        extras = {"turns": run.requests, "pause_restarts": run.pause_restarts, "output_tokens": run.output_tokens}
    else:
        items, finish_reason, output_tokens = await openai_mcp_client.answer(ctx, turns + [question], url, sampling)
        record = openai_mcp_client.run_record(items, finish_reason)
        extras = {"turns": 1, "output_tokens": output_tokens}

    def document(docid: str) -> Document | None:  # a search's (a cached answer's: the corpus's, without scores)
        found: Document | None = agent._served.get(docid) or (lookup(docid) if lookup else None)
        return found

    return anthropic_client.prediction(example.id, record, extras, document)
