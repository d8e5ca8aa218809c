"""The CRAG repo's baselines as prompt builders (facebookresearch/CRAG models/*.py), plus the
paper's "straightforward RAG" variant. The generic `closed_book` / `vanilla` systems reach them
through `CragPrompting.reader_prompt`; sampling (temperature 0.1, top_p 0.9, max_tokens 50, chat
template) comes from the task's registry defaults.

  closed book  vanilla_llama_baseline.py: vanilla system prompt, "Current Time/Question" message.
  RAG          rag_llama_baseline.py: every page -> sentences, de-duplicated, MiniLM cosine top 20,
               "# References " block cut to 4,000 characters.
  RAG + KG     rag_knowledge_graph_baseline.py: the same top 20 (web block cut to 2,000), one
               entity-extraction call, KG calls for the open/encyclopedia and movie domains only,
               KG block cut to 2,000.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from json import JSONDecoder
from typing import Any

import numpy as np

from ragbench.api import Document, Example
from ragbench.api.data import parse_json

from .kg.endpoints import ENDPOINTS
from .prompts import STRAIGHTFORWARD_SYSTEM, STRAIGHTFORWARD_USER, baseline_prompt

NUM_CONTEXT_SENTENCES = 20
MAX_CONTEXT_REFERENCES_LENGTH = 4000
ENTITY_SAMPLING = {"max_tokens": 4096, "temperature": 0.1, "top_p": 0.9}  # extract_entity's SamplingParams
KgCall = Callable[..., Awaitable[Any]]
Messages = list[dict[str, str]]


class BaselineCrash(RuntimeError):
    """Input on which the upstream baseline crashes; the example is recorded as failed."""


def _chat(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def closed_book_messages(example: Example) -> Messages:
    user = baseline_prompt("vanilla_user_template").format(
        query_time=example.extras.get("query_time", ""), query=example.question
    )
    return _chat(baseline_prompt("vanilla_system"), user)


def _rag_user(example: Example, references: str) -> str:
    return baseline_prompt("rag_user_template").format(
        references=references, query=example.question, query_time=example.extras.get("query_time", "")
    )


def rag_messages(example: Example, sentences: list[Document]) -> Messages:
    references = ""
    if len(sentences) > 0:
        references += "# References \n" + "".join(f"- {doc.text.strip()}\n" for doc in sentences)
    return _chat(baseline_prompt("rag_system"), _rag_user(example, references[:MAX_CONTEXT_REFERENCES_LENGTH]))


def rag_kg_messages(example: Example, sentences: list[Document], kg_text: str) -> Messages:
    half = int(MAX_CONTEXT_REFERENCES_LENGTH / 2)
    web = "".join(f"- {doc.text.strip()}\n" for doc in sentences)[:half]
    references = baseline_prompt("rag_kg_references_template").format(web_lines=web, kg_text=kg_text[:half])
    return _chat(baseline_prompt("rag_kg_system"), _rag_user(example, references))


def rank_sentences(
    query_vector: np.ndarray, sentences: list[str], vectors: np.ndarray, k: int = NUM_CONTEXT_SENTENCES
) -> list[int]:
    """Indices of the top-k sentences by dot product (= cosine on unit vectors), in the order
    `relevant_chunks[(-cosine_scores).argsort()[:20]]` gives."""
    if not sentences:
        return []
    scores = (vectors * query_vector).sum(1)
    return [int(i) for i in (-scores).argsort()[:k]]


def unique_sentences(docs: list[Document], per_page: list[list[str]]) -> tuple[list[str], list[Document], list[int]]:
    """The example's sentences without repeats, each with the first page it came from and its
    position among all pages' sentences. Upstream de-duplicates with `list(set(...))`, whose order
    varies between processes; first-occurrence order makes runs repeatable (only ties in cosine
    score can order differently)."""
    origin: dict[str, tuple[Document, int]] = {}
    position = 0
    for doc, sentences in zip(docs, per_page):
        for sentence in sentences:
            origin.setdefault(sentence, (doc, position))
            position += 1
    return list(origin), [doc for doc, _ in origin.values()], [at for _, at in origin.values()]


def rank_page_sentences(
    docs: list[Document], per_page: list[list[str]], page_vectors: list[np.ndarray], query_vector: np.ndarray
) -> tuple[list[str], list[Document], list[int]]:
    """The unique sentences of the pages, their origins, and the top-k order of `rank_sentences`,
    from per-page sentence vectors (rows in the pages' sentence order)."""
    sentences, origins, positions = unique_sentences(docs, per_page)
    if not sentences:
        return [], [], []
    vectors = np.concatenate(page_vectors)[positions]
    return sentences, origins, rank_sentences(query_vector, sentences, vectors)


# --- entity extraction and KG ------------------------------------------------------------------


def entity_messages(example: Example) -> Messages:
    user = baseline_prompt("entity_extraction_user_template").format(
        query=example.question, query_time=example.extras.get("query_time", "")
    )
    return _chat(baseline_prompt("entity_extraction_system"), user)


def extract_json_objects(text: str, decoder: JSONDecoder = JSONDecoder()) -> list[Any]:
    """Every JSON value that starts at a "{" and decodes, scanning left to right (upstream helper)."""
    pos = 0
    results: list[Any] = []
    while True:
        match = text.find("{", pos)
        if match == -1:
            return results
        try:
            result, index = decoder.raw_decode(text[match:])
            results.append(result)
            pos = match + index
        except ValueError:
            pos = match + 1


def parse_entities(reply: str) -> Any:
    """extract_entity: json.loads, else the list of JSON objects found in the reply."""
    try:
        return parse_json(reply)
    except ValueError:
        return extract_json_objects(reply)


def _names(value: Any) -> Any:
    return value.split(",") if isinstance(value, str) else value


async def kg_text(entity: Any, call: KgCall) -> str:
    """get_kg_results for one question: KG hits as `str(dict)` joined by "<DOC>\\n". Every
    `except Exception: pass` of upstream is kept (a failing call drops its branch); a reply that
    is not a JSON object crashes upstream (`.keys()` on a list) and raises BaselineCrash here."""
    if not isinstance(entity, dict):
        raise BaselineCrash(
            f"entity extraction gave a {type(entity).__name__}, not a JSON object "
            "(rag_knowledge_graph_baseline.py get_kg_results crashes on .keys())"
        )
    results: list[dict[str, Any]] = []
    if "domain" not in entity:
        return ""
    domain = entity["domain"]
    if domain in ["encyclopedia", "other"] and "main_entity" in entity:
        try:
            top = (await call("open_search_entity_by_name", entity["main_entity"]))[0]
            results.append({top: await call("open_get_entity", top)})
        except Exception:
            pass
    if domain == "movie":
        await _movie_results(entity, call, results)
    return "<DOC>\n".join(str(result) for result in results) if results else ""


async def _movie_results(entity: dict[str, Any], call: KgCall, results: list[dict[str, Any]]) -> None:
    if entity.get("movie_name") is not None:
        for movie_name in _names(entity["movie_name"]):
            try:
                info = (await call("movie_get_movie_info", movie_name))[0]
                results.append({movie_name + "_" + entity["movie_aspect"]: info[entity["movie_aspect"]]})
            except Exception:
                pass
    if entity.get("person") is not None:
        for person in _names(entity["person"]):
            try:
                info = (await call("movie_get_person_info", person))[0]
                aspect = entity["person_aspect"]
                if aspect in ["oscar_awards", "birthday"]:
                    results.append({person + "_" + aspect: info[aspect]})
                if aspect in ["acted_movies", "directed_movies"]:
                    # upstream appends the whole response here, {"result": ...}, not its result
                    movies = [
                        {"result": await call("movie_get_movie_info_by_id", movie_id)} for movie_id in info[aspect]
                    ]
                    results.append({person + "_" + aspect: movies})
            except Exception:
                pass
    if entity.get("year") is not None:
        year_value = entity["year"]
        years = str(year_value).split(",") if isinstance(year_value, (str, int)) else year_value
        for year in years:
            try:
                info = await call("movie_get_year_info", year)
                all_movies = [
                    (await call("movie_get_movie_info_by_id", movie_id))["title"] for movie_id in info["movie_list"]
                ]
                # Oscar entries are award objects, not ids: this call fails upstream too, and the
                # whole year contributes nothing
                oscar_movies = [
                    (await call("movie_get_movie_info_by_id", movie_id))["title"] for movie_id in info["oscar_awards"]
                ]
                results.append({year + "_all_movies": all_movies})
                results.append({year + "_oscar_movies": oscar_movies})
            except Exception:
                pass


def traced_kg_call(ctx: Any, client: Any, max_chars: int = 2000) -> KgCall:
    """A KG call that is recorded in the example's trace (long results are cut in the trace only)."""

    async def call(method: str, *args: Any) -> Any:
        body = ENDPOINTS[method].body(args, {})
        with ctx.step("tool", f"crag_kg.{method}", body) as step:
            result = await client.call(method, body)
            text = json.dumps(result, ensure_ascii=False, default=str)
            step.response = (
                {"result": result} if len(text) <= max_chars else {"excerpt": text[:max_chars], "chars": len(text)}
            )
        return result

    return call


# --- the paper's straightforward RAG -------------------------------------------------------------

_TAG = re.compile(r"<[^>]+>")


def snippet_lines(docs: list[Document]) -> str:
    """Page snippets in their original order, tags removed, one per line."""
    return "".join(f"- {_TAG.sub('', doc.text).strip()}\n" for doc in docs)


def straightforward_messages(example: Example, web: str, kg: str | None) -> Messages:
    references = web if kg is None else f"# Web\n{web}# Knowledge Graph\n{kg}\n"
    user = STRAIGHTFORWARD_USER.format(
        query=example.question,
        query_time=example.extras.get("query_time", ""),
        references=references if references.strip() else "(none)",
    )
    return _chat(STRAIGHTFORWARD_SYSTEM, user)
