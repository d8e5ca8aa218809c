"""`search_agent`: the loop of BrowseComp-Plus's clients (texttron/BrowseComp-Plus search_agent/openai_client.py
`run_conversation_with_tools` and oss_client.py's, at commit 97c637c) over chat completions with native tool
calls: the question in BrowseComp-Plus's prompt, then turn after turn the model's tool calls are answered
(`search` by the run's retriever, `get_document` by the corpus) until it answers without calling a tool or a
budget ends the example.

Each turn's messages are the previous turn's plus what that turn added (the model's turn, each call's result),
nothing re-rendered, so an engine's prefix cache serves the conversation; the turns of all examples go through
the scheduler like every other LLM call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Document,
    Example,
    FormatCheck,
    Prediction,
    SampleRecord,
    System,
    SystemDeclaration,
    Task,
)
from ragbench.api.data import JsonObject
from ragbench.api.engines import Engine, EngineNeeds
from ragbench.api.protocols import OwnCorpus
from ragbench.api.retrieval import CorpusLookup, corpus_format
from ragbench.api.text import Snippets

from . import gemini_client, mcp_server, qwen_client, run_stats, server_side, tongyi_client
from .example_run import SearchAgentRun
from .prompts import GET_DOCUMENT_DESCRIPTION, SEARCH_DESCRIPTION, TONGYI_SYSTEM_PROMPT, query_template
from .shapes import AgentExtras, DocumentValue, SearchHit, TurnSampling
from .tools import (
    CLIENTS,
    answer_call,
    document_result,
    document_value,
    search_hits,
    search_results,
    tool_definitions,
)

COMPLETED = "completed"  # the model answered; "turns" or "tokens": that budget ended the example
INCOMPLETE = "incomplete"  # openai_client: the model's final turn was cut short (the Responses API's status)
FINISHED = ("stop", "tool_calls")  # the finish reasons of a turn the server completed
QWEN_SAMPLING: TurnSampling = {"temperature": 0.7, "top_p": 0.8}  # qwen_client.py's generate_cfg
QWEN_MAX_CALLS = 20  # qwen_agent's MAX_LLM_CALL_PER_RUN
TONGYI_SAMPLING: TurnSampling = {"temperature": 0.85, "top_p": 0.95}  # tongyi_client.py's command-line defaults


class SearchAgent(System):
    """A deep-research agent as BrowseComp-Plus's clients run one: the model gets BrowseComp-Plus's prompt and
    tools and calls them natively until it answers; the answer is its last text, stripped (what evaluate_run.py
    judges), "" where a budget ended the example.

    Options (defaults from openai_client.py's command line):
      client              "openai_client" (tools `search(query)` and `get_document(docid)`, tool_choice
                          "auto", the token budget shared by the turns), "oss_client" (the search tool
                          named `local_knowledge_base_retrieval(user_query)`, no tool choice sent, every
                          turn the whole token budget) or "qwen_client" (Qwen's agent library over the MCP
                          server's tools: no `tools` sent, they are listed in the system message and the
                          calls read from the answer's text, qwen_client.py's module; every turn the whole
                          token budget; temperature 0.7 and top_p 0.8 unless given; at most 20 turns) or
                          "tongyi_client" (Tongyi DeepResearch's ReAct loop, tongyi_client.py's module: its own
                          system prompt, the question alone as the user message, the search tool in the
                          system prompt and the first <tool_call> of each answer made, until an answer holds
                          <answer> tags; every turn the whole token budget, stop strings "\n<tool_response>"
                          and "<tool_response>"; temperature 0.85 and top_p 0.95 unless given; past 108K
                          tokens of conversation one last turn asks for the answer) or "anthropic_client" /
                          "openai_client_with_mcp" (one request per question, the tools on an MCP server) or
                          "gemini_client" (a gemini: model, google-genai's automatic function calling over the
                          MCP server's tools, run by ragbench: gemini_client.py's module)
      k                   hits per search (5)
      get_document        offer the get_document tool too (False)
      citations           the prompt asks for docids in brackets (True; get_document needs it)
      system_prompt       a system message before the question (None: none, as --system unset)
      snippet_max_tokens  a hit's text cut to its first N tokens of `snippet_tokenizer` (512; 0: whole text)
      snippet_tokenizer   the tokenizer snippets are counted in ("Qwen/Qwen3-0.6B"), read from disk only
      max_turns           model turns per example (None: 100, --max-iterations; qwen_client's 20)
      current_date        tongyi_client's date at the end of its system prompt (None: today's, as it does)
      context_tokenizer   the tokenizer tongyi_client counts the conversation in (None: the served model's),
                          read from disk only
      token_budget        output tokens per example (10000, --max_tokens)
      temperature, top_p  sent when given (None: not sent, the server's; openai_client sends none to a model
                          whose name starts with "o"; qwen_client 0.7 and 0.8 unless given)
      corpus              the passages get_document reads: a JSONL or DPR TSV file or a datasets save_to_disk
                          folder (None: the task's own corpus)
      mcp_port, mcp_url   those two: the MCP server's port on 127.0.0.1 (8000; 0: any free), the URL sent
                          (None: http://127.0.0.1:PORT/mcp); max_pause_attempts: requests after a paused answer (5)
    Recorded per example (extras): `status` ("completed"; "incomplete": openai_client's final turn cut short by
    the server; or "turns" / "tokens": the budget that ended it),
    `tool_call_counts`, `retrieved_docids` (the union of the searches' docids, sorted), `turns`,
    `output_tokens`, `invalid_tool_calls` (calls answered with an error because their arguments did not fit the
    tool's parameters) and `result`, the run file's list of tool calls and texts.
    """

    name = "search_agent"
    declares = SystemDeclaration(
        retrieves=True,
        searches_own_queries=True,
        prompt_style="browsecomp_plus",
        budget_options={"passages": "k", "searches": "max_turns"},
    )

    def __init__(
        self,
        client: Literal[
            "openai_client",
            "oss_client",
            "qwen_client",
            "tongyi_client",
            "anthropic_client",
            "openai_client_with_mcp",
            "gemini_client",
        ] = "openai_client",
        k: Annotated[int, Ge(1)] = 5,
        get_document: bool = False,
        citations: bool = True,
        system_prompt: str | None = None,
        snippet_max_tokens: Annotated[int, Ge(0)] = 512,
        snippet_tokenizer: str = "Qwen/Qwen3-0.6B",
        max_turns: Annotated[int, Ge(1)] | None = None,
        token_budget: Annotated[int, Ge(1)] = 10000,
        temperature: float | None = None,
        top_p: float | None = None,
        corpus: str | None = None,
        current_date: str | None = None,
        context_tokenizer: str | None = None,
        mcp_port: Annotated[int, Ge(0)] = 8000,
        mcp_url: str | None = None,
        max_pause_attempts: Annotated[int, Ge(0)] = 5,
    ) -> None:
        self.client = client
        self.k, self.get_document, self.citations, self.system_prompt = int(k), get_document, citations, system_prompt
        self.snippet_max_tokens, self.snippet_tokenizer = int(snippet_max_tokens), snippet_tokenizer
        self.qwen, self.tongyi = client == "qwen_client", client == "tongyi_client"
        if self.tongyi and (get_document or system_prompt is not None):
            raise ConfigError(
                "search_agent: tongyi_client offers the search tool alone under its own system prompt; "
                "drop get_document and system_prompt, or choose another client"
            )
        self.current_date, self.context_tokenizer = current_date, context_tokenizer
        self.mcp_port, self.mcp_url, self.max_pause_attempts = int(mcp_port), mcp_url, int(max_pause_attempts)
        self.server_side = client in server_side.ENGINES
        self.max_turns = int(max_turns if max_turns is not None else QWEN_MAX_CALLS if self.qwen else 100)
        self.token_budget = int(token_budget)
        self.temperature, self.top_p, self.corpus = temperature, top_p, corpus
        self._client = CLIENTS[client]
        self._template = query_template(get_document, citations)
        self._tools = tool_definitions(self._client, self.k, get_document)
        self._functions = [qwen_client.mcp_function("search", SEARCH_DESCRIPTION.format(k=self.k), "query")]
        if get_document:
            self._functions.append(qwen_client.mcp_function("get_document", GET_DOCUMENT_DESCRIPTION, "docid"))
        self._snippets = Snippets("search_agent", snippet_tokenizer, self.snippet_max_tokens)
        self._documents: CorpusLookup | None = None
        self._served: dict[str, Document] = {}  # the documents the MCP server's searches returned
        self._count_tokens: Callable[[str], int] | None = None

    def engine_needs(self, task: Task) -> EngineNeeds:
        return EngineNeeds(system=f"search_agent on {task.name}", tools=True)

    def check_model(self, engine: Engine) -> None:
        if self.server_side:
            server_side.check_engine(self.client, engine)
        if self.client == "gemini_client":
            gemini_client.check_engine(engine)

    def _corpus_path(self, task: Task) -> str | None:
        return self.corpus or (str(task.corpus) if isinstance(task, OwnCorpus) else None)

    def check(self, task: Task) -> None:
        self._snippets.check()
        if self.server_side:
            mcp_server.check_installed()
        if self.corpus is not None:
            corpus_format(Path(self.corpus))  # a JSONL or DPR TSV file, or a datasets save_to_disk folder

    def _lookup(self, task: Task) -> Callable[[str], Document | None] | None:
        """The corpus's document of a docid (None: the run has none), its rows found on the run's first call and
        each document read from disk when asked (BrowseComp-Plus's corpus is several GB of text)."""
        path = self._corpus_path(task)
        if path is None:
            return None

        def lookup(docid: str) -> Document | None:
            if self._documents is None:
                self._documents = CorpusLookup(path)
            return self._documents.get(docid)

        return lookup

    def _sampling(self, remaining: int, model: str) -> TurnSampling:
        """What a turn sends: the output-token limit, and a temperature and top_p only where the client sends
        them (given, and not to an "o" model under openai_client; qwen_client's own); the server's otherwise."""
        sampling = QWEN_SAMPLING.copy() if self.qwen else TONGYI_SAMPLING.copy() if self.tongyi else TurnSampling()
        sampling["max_tokens"] = remaining if self._client.shares_token_budget else self.token_budget
        if self._client.sends_sampling(model):
            if self.temperature is not None:
                sampling["temperature"] = self.temperature
            if self.top_p is not None:
                sampling["top_p"] = self.top_p
        left = [name for name in ("temperature", "top_p") if name not in sampling]
        if left:
            sampling["left_to_server"] = left
        return sampling

    async def run(self, example: Example, ctx: Context) -> Prediction:
        assert ctx.retriever is not None  # `retrieves`: the run gives one
        retriever = ctx.retriever

        async def search(query: str) -> tuple[list[SearchHit], list[Document]]:
            docs = await retriever.search(query, self.k)
            return search_hits(docs, self._snippets.cut), docs

        lookup = self._lookup(ctx.task)
        question = {"role": "user", "content": self._template.format(Question=example.question)}
        if self.qwen:
            return await self._run_qwen_client(example, ctx, question, search, lookup)
        if self.tongyi:
            return await self._run_tongyi_client(example, ctx)
        if self.server_side:  # the API's servers call the tools, on the run's MCP server
            return await server_side.run_example(self, example, ctx, question, search, lookup)
        if self.client == "gemini_client":  # google-genai's automatic function calling, on ragbench's side
            return await gemini_client.run_example(self, example, ctx, question, search, lookup)

        async def searched(query: str) -> tuple[str, list[Document]]:
            hits, docs = await search(query)
            return search_results(hits), docs

        document = None if lookup is None else (lambda docid: document_result(docid, lookup(docid)))
        messages: list[Mapping[str, object]] = (
            [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        )
        messages.append(question)
        run, status, answer, turns = SearchAgentRun(self._client), "turns", "", 0
        while turns < self.max_turns:
            remaining = self.token_budget - run.output_tokens
            if self._client.shares_token_budget and remaining <= 0:
                status = "tokens"
                break
            turns += 1
            with ctx.group(f"turn {turns}"):
                response = await ctx.llm.chat(
                    messages,
                    step="turn",
                    tools=self._tools,
                    tool_choice=self._client.tool_choice,
                    **self._sampling(remaining, ctx.llm.engine.served_model),
                )
                run.output_tokens += response.completion_tokens
                run.reasoned(response.items)
                run.said(response.text)
                if not response.tool_calls:
                    cut = self._client.records_incomplete and response.finish_reason not in FINISHED
                    status, answer = INCOMPLETE if cut else COMPLETED, response.text.strip()
                    break
                turn: dict[str, object] = {  # a chat turn: its tool calls are the engine's values, not JSON
                    "role": "assistant",
                    "content": response.text or None,
                    "tool_calls": response.tool_calls,
                }
                # over the Responses API the turn is its output items, reasoning included, sent back as the clients do
                if response.items is not None:
                    turn["items"] = self._client.sent_back(response.items)
                messages.append(turn)
                for call in response.tool_calls:
                    answered = await answer_call(call.name, call.raw_arguments, self._client, searched, document)
                    ctx.record_step(
                        f"tool {call.name}",
                        inputs={"arguments": call.raw_arguments},
                        outputs={"output": answered.output, "failed": answered.failed},
                    )
                    run.called(
                        call.name,
                        call.raw_arguments,
                        answered.output,
                        answered.failed,
                        answered.docs,
                        invalid=answered.invalid,
                    )
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": answered.output})
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=answer or None,
            docs=run.docs,
            extras=dict(run.extras(status, turns)),
        )

    async def _run_qwen_client(
        self,
        example: Example,
        ctx: Context,
        question: dict[str, str],
        search: qwen_client.Search,
        lookup: Callable[[str], Document | None] | None,
    ) -> Prediction:
        """The example as qwen_client runs it: its status "completed" where the agent's last message is a text,
        else "turns" (qwen_client's "incomplete": its 20 requests used)."""

        def document(docid: str) -> DocumentValue | None:  # mcp_server's get_document: the searcher's dict
            return document_value(docid, None if lookup is None else lookup(docid))

        system = {"role": "system", "content": qwen_client.system_message(self._functions, self.system_prompt)}
        agent = await qwen_client.run_agent(
            ctx,
            [system, question],
            self._functions,
            self._sampling(self.token_budget, ctx.llm.engine.served_model),
            self.max_turns,
            search,
            document,
        )
        record = qwen_client.run_record(agent.response)
        last = agent.response[-1] if agent.response else {}
        answer = last["content"].strip() if last.get("role") == "assistant" else ""
        extras: AgentExtras = {
            **record,
            "status": COMPLETED if answer else "turns",
            "turns": agent.turns,
            "output_tokens": agent.output_tokens,
            "invalid_tool_calls": agent.invalid_calls,
        }
        return Prediction(
            example_id=example.id, answer=answer, raw_output=answer or None, docs=agent.docs, extras=dict(extras)
        )

    async def _run_tongyi_client(self, example: Example, ctx: Context) -> Prediction:
        """The example as tongyi_client runs it; its status the run file's ("completed" for an answer, else the
        termination tongyi_client records, e.g. "exceed available llm calls")."""
        assert ctx.retriever is not None
        retriever = ctx.retriever

        async def search(query: str) -> list[Document]:
            return await retriever.search(query, self.k)

        model = ctx.llm.engine.served_model
        if self._count_tokens is None:  # the tokenizer read at the first example
            self._count_tokens = tongyi_client.token_counter(self.context_tokenizer or model)
        today = self.current_date or date.today().strftime("%Y-%m-%d")
        system = {"role": "system", "content": TONGYI_SYSTEM_PROMPT + today}
        run = tongyi_client.TongyiRun([system, {"role": "user", "content": example.question}])
        await tongyi_client.run_agent(
            ctx,
            run,
            self._sampling(self.token_budget, model),
            self.max_turns,
            search,
            self._snippets.cut,
            self._count_tokens,
        )
        answer = run.answer.strip()
        return Prediction(
            example_id=example.id, answer=answer, raw_output=answer or None, docs=run.docs, extras=dict(run.extras())
        )

    def format_adherence(self, samples: list[SampleRecord]) -> list[FormatCheck] | None:
        return run_stats.qwen_call_adherence(samples) if self.qwen else None

    def statistics(self, samples: list[SampleRecord]) -> JsonObject | None:
        return run_stats.statistics(samples)
