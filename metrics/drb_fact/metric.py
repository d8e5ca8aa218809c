"""`drb_fact`: DeepResearch Bench's FACT citation check of a report, asked of the run's `--judge` as its scripts
(Ayanami0730/deep_research_bench 214741e, utils/extract.py, deduplicate.py, scrape.py, validate.py and stat.py) ask
Gemini: each call one user turn and nothing else, as google-genai sends the scripts' calls (drb_race's request):

1. the report's (fact, url) citations extracted, with the prompt of the task's language (replies.extracted);
2. per cited URL with more than one fact, the facts de-duplicated (replies.kept_statements);
3. per cited URL, the page read (pages.py: offline from the example's documents or a pages file, or the Jina
   Reader as the script reads it), and its facts judged supported, unsupported or unknown against it
   (replies.verdicts).

Per report, as stat.py counts: `fact_citations`, the facts judged other than unknown, and
`fact_effective_citations`, those judged supported; a report without extracted citations is left out (None), as
are the facts of a page whose verdicts did not read. Over the run, `fact_citation_accuracy`: supported / judged,
summed over the reports (stat.py's valid_rate); the mean of each per-report key is its total_citations and
total_valid_citations. A de-duplication or validation whose reply the script's try cannot read is asked again,
the same request, up to the script's three tries (replies.dedup_asked_again, verdicts_asked_again); each try is a
new call (the judge handle `redrawn`: seeded in its cache key, the seed left to the server), and only the reply of
the last try is counted where it still does not read."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ragbench.api import (
    ConfigError,
    CorpusValue,
    Example,
    KeySpec,
    Metric,
    MetricDeclaration,
    Prediction,
    SampleRecord,
    Scores,
)
from ragbench.api.data import JsonObject

from . import replies
from .pages import JINA_URL, page_reader

PROMPTS = json.loads(Path(__file__).with_name("prompts.json").read_text(encoding="utf-8"))
KEYS = ("fact_citations", "fact_effective_citations")
ACCURACY = "fact_citation_accuracy"
LANGUAGES = ("task", "zh", "en")
READERS = ("local", "jina")
LEFT_TO_SERVER = ("temperature", "top_p", "max_tokens", "seed")  # as drb_race: google-genai sends none of them
TRIES = 3  # deduplicate.py's and validate.py's `while retries < 3`


class DeepResearchBenchFact(Metric):
    name = "drb_fact"
    declares = MetricDeclaration(
        keys=KEYS,
        corpus_keys=(ACCURACY,),
        needs=("judge",),
        judge_roles=("judge",),
        key_specs={
            "fact_citations": KeySpec(None, (0, None)),
            "fact_effective_citations": KeySpec(True, (0, None)),
            ACCURACY: KeySpec(True, (0, 1)),
        },
        counters={
            "fact_extract_unparsed": "reports whose citation extraction did not read: left out, as FACT leaves them",
            "fact_no_citations": "reports the judge found no citation in: left out of FACT's averages, as stat.py does",
            "fact_dedup_unparsed": "de-duplication replies that did not read (the last of three tries, where the "
            "script tries again): every fact of the page kept",
            "fact_page_unread": "cited pages that could not be read: the judge was shown 'scrape failed: ...'",
            "fact_validate_unparsed": "pages whose verdicts did not read (in three tries where validate.py tries "
            "again): their facts left out, as stat.py does",
        },
    )

    def __init__(
        self,
        reader: str = "local",
        pages: str | None = None,
        reader_url: str = JINA_URL,
        reader_retry_wait: float = 1.0,
        reader_timeout: float = 90.0,
        language: str = "task",
        strip_text_fragments: bool = False,
    ) -> None:
        if language not in LANGUAGES:
            raise ConfigError(f"metric drb_fact: language={language} is not one of task, zh, en")
        self.reader_kind, self.pages_file, self.reader_url = reader, pages, reader_url
        self.retry_wait, self.timeout = float(reader_retry_wait), float(reader_timeout)
        self.language, self.strip_text_fragments = language, bool(strip_text_fragments)
        self.pages = page_reader(reader, pages, reader_url, self.retry_wait, self.timeout)

    def config(self) -> JsonObject:
        return super().config() | {
            "reader": self.reader_kind,
            "pages": self.pages_file,
            "reader_url": self.reader_url if self.reader_kind == "jina" else None,
            "language": self.language,
            "strip_text_fragments": self.strip_text_fragments,
        }

    async def ask(self, judge: Any, prompt: str) -> str:
        reply = await judge.chat(
            [{"role": "user", "content": prompt}], step=f"judge:{self.name}", left_to_server=LEFT_TO_SERVER
        )
        return str(reply.text or "")

    async def ask_tries(self, judge: Any, prompt: str, asked_again: Callable[[str], bool]) -> str:
        """The reply of the last try: `prompt` asked again, unchanged, while the script's try cannot read the reply
        (`asked_again`), up to TRIES; each try a new draw of the judge, never the cache's answer to the one before."""
        reply = await self.ask(judge, prompt)
        for _ in range(TRIES - 1):
            if not asked_again(reply):
                break
            reply = await self.ask(judge.redrawn(), prompt)
        return reply

    def _language(self, example: Example) -> str:
        language = self.language if self.language != "task" else example.meta.get("language")
        if language not in ("zh", "en"):
            raise ConfigError(
                f"metric drb_fact: example {example.id} has no language zh or en (meta language {language!r}): "
                "--metric-arg drb_fact.language=en|zh sets one for every example"
            )
        return str(language)

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        (judge,) = ctx.judges_for(self)
        language = self._language(example)
        article = prediction.answer or ""
        if self.strip_text_fragments:
            article = replies.strip_text_fragments(article)
        cited = replies.extracted(await self.ask(judge, PROMPTS["extract"][language].format(report_text=article)))
        if not cited:
            ctx.count("fact_extract_unparsed" if cited is None else "fact_no_citations")
            return dict.fromkeys(KEYS)
        by_url: dict[str, list[str]] = {}
        for citation in cited:
            by_url.setdefault(citation.url, []).append(citation.fact)
        judged = supported = 0
        for url, facts in by_url.items():
            kept = await self._deduplicated(judge, language, facts, ctx)
            page = await self.pages.page(url, prediction.docs or ())
            if not page.read:
                ctx.count("fact_page_unread")
            prompt = PROMPTS["validate"][language].format(reference=page.text, statements=numbered(kept))
            reply = await self.ask_tries(judge, prompt, partial(replies.verdicts_asked_again, statements=len(kept)))
            results = replies.verdicts(reply, len(kept))
            if results is None:
                ctx.count("fact_validate_unparsed")
                continue
            judged += sum(result != "unknown" for result in results)
            supported += sum(result == "supported" for result in results)
        return {"fact_citations": judged, "fact_effective_citations": supported}

    async def _deduplicated(self, judge: Any, language: str, facts: list[str], ctx: Any) -> list[str]:
        if len(facts) == 1:
            return facts
        prompt = PROMPTS["deduplicate"][language].format(statements=numbered(facts))
        kept = replies.kept_statements(await self.ask_tries(judge, prompt, replies.dedup_asked_again), facts)
        if kept is None:
            ctx.count("fact_dedup_unparsed")
            return facts
        return kept

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, CorpusValue]:
        """stat.py's valid_rate: supported over judged, each summed over the reports scored (None where none of
        their facts was judged other than unknown: the script divides by zero)."""
        pairs = [
            (judged, supported)
            for s in samples
            if (judged := s.scores.get("fact_citations")) is not None
            and (supported := s.scores.get("fact_effective_citations")) is not None
        ]
        judged, supported = (sum(values) for values in zip(*pairs)) if pairs else (0.0, 0.0)
        return {ACCURACY: CorpusValue(supported / judged if judged else None, len(pairs))}


def numbered(statements: list[str]) -> str:
    return "\n".join(f"{n}. {statement}" for n, statement in enumerate(statements, start=1))
