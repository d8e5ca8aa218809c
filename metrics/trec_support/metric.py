"""`trec_support`: TREC 2025 RAG's support (attribution) assessment per answer, as the organisers' released
support-evaluation script asks it, with the weighted precision and recall of Thakur et al. (arXiv 2504.15205).

For each answer sentence that cites (the sentences and citations as `ragbench export trec-rag` writes the
submission, a citation an index into the references: the documents shown, in order; a submission's citations given
as {docid: score} in the script's order, by score from high to low), its first `max_citations` (3) citations in
that order are each judged once: the chat is the released script's (prompts.py; the whole
answer for reference, the sentence, and the cited segment as "TITLE: SEGMENT") at the script's sampling,
temperature 0.7, top_p 0.95, top_k 20, min_p 0.0 and 8,192 tokens, no seed and no n (vLLM's offline call; an
`openai:` judge served by `vllm serve` gets top_k and min_p as the body's extra fields); `no_thinking=true` is the
script's `--no_thinking`, the chat template rendered with `enable_thinking=False` (an `openai:` judge sends it as
vLLM's `chat_template_kwargs`). Sentences without a
citation are not judged, as the script skips them. The segment's title and text are the shown document's, or with
`corpus=PATH` (answers scored from submission files, whose references are docids only) the corpus segment's, as
the script reads them from its Lucene index; a cited docid the corpus lacks is not judged and is counted (the
script prints it and skips the pair).

The scores are the published description's (the track's scoring script is not public): weighted precision, the
mean weight of the judged pairs; weighted recall, the mean over all the answer's sentences of the best weight
among its judged citations (a sentence without one: 0). An answer with no sentence is not scored (None), and
precision is None where no sentence cites."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example, Metric, MetricDeclaration, Prediction, SampleRecord, Scores
from ragbench.api.data import JsonObject
from ragbench.api.engines import SamplingArgs
from ragbench.api.text import cited_sentences

from ..segment_texts import SegmentTexts, existing_corpus
from .agreement import AGREEMENT_KEYS, COUNTERS, UNLABELLED, agreement, cell, level, read_labels
from .labels import WEIGHTS, label
from .prompts import messages

JUDGED_STEP = "trec_support_pairs"  # the trace's record of an answer's judged pairs, for agreement with others
SAMPLING: SamplingArgs = {
    "temperature": 0.7,
    "top_p": 0.95,
    "top_k": 20,
    "min_p": 0.0,
    "max_tokens": 8192,
    "left_to_server": ("n", "seed"),  # vLLM's SamplingParams there has neither
}


def cited_text(doc: Document) -> str:
    """A segment as the script shows it: `seg['title'] + ': ' + seg['segment']`."""
    return f"{doc.title}: {doc.text}"


class TrecSupport(Metric):
    name = "trec_support"
    declares = MetricDeclaration(
        keys=("trec_support_precision", "trec_support_recall"),
        corpus_keys=tuple(AGREEMENT_KEYS),  # labels=FILE only
        needs=("judge",),
        judge_roles=("judge",),  # one judge, as the script's one model; --judge-repeats for its agreement
        value_range=(0, 1),
        key_specs=AGREEMENT_KEYS,
        counters=COUNTERS
        | {
            "trec_support_unparsed": 'judge replies with no <support> tag naming "Full Support", "Partial Support" '
            'or "No Support": weighed as no support',
            "trec_support_citing_unshown": "citations of no reference shown (an index past the references): left "
            "out, as `ragbench export trec-rag` leaves them out of the submission",
            "trec_support_cut": "citations past a sentence's first max_citations: not judged, as the script cuts them",
            "trec_support_not_in_corpus": "cited segments the corpus lacks (corpus=PATH): not judged, as the script "
            "skips a docid its index lacks",
        },
    )

    def __init__(
        self, max_citations: int = 3, corpus: str | None = None, labels: str | None = None, no_thinking: bool = False
    ) -> None:
        if int(max_citations) < 1:
            raise ConfigError(f"metric {self.name}: max_citations={max_citations} must be 1 or more")
        self.max_citations, self.corpus_path, self.labels_path = int(max_citations), corpus, labels
        self.no_thinking = bool(no_thinking)
        # the script's --no_thinking: its chat template rendered with enable_thinking=False
        self.sampling = SAMPLING | ({"enable_thinking": False} if self.no_thinking else {})
        self.segments = None if corpus is None else SegmentTexts(existing_corpus(self.name, corpus), cited_text)
        self.other = None if labels is None else read_labels(Path(labels))

    def config(self) -> JsonObject:
        config: JsonObject = {"name": self.name, "max_citations": self.max_citations, "corpus": self.corpus_path}
        if self.no_thinking:
            config["no_thinking"] = True
        if self.labels_path is not None:
            config["labels"] = self.labels_path
        return config

    def corpus(self, samples: list[SampleRecord], seed: int) -> Mapping[str, float | None]:
        """labels=FILE: the judge's agreement with the file's labels over the run (agreement.py)."""
        return agreement(samples, self.name) if self.other is not None else {}

    async def cited(self, docs: list[Document], indices: list[int]) -> list[str | None]:
        """Each cited segment as the judge is shown it; None where `corpus` lacks it."""
        if self.segments is None:
            return [cited_text(docs[i]) for i in indices]
        return await self.segments.lookup([str(docs[i].id) for i in indices])

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        docs = prediction.shown_docs(f"{self.name}'s cited segments")
        sentences, unshown = cited_sentences(prediction.answer or "", len(docs))
        count = getattr(ctx, "count", None) or (lambda name: None)
        for _ in range(unshown):
            count("trec_support_citing_unshown")
        if not sentences:
            return {"trec_support_precision": None, "trec_support_recall": None}
        answer = " ".join(text for text, _ in sentences).strip()
        pairs = [(i, c) for i, (_, cited) in enumerate(sentences) for c in cited[: self.max_citations]]
        for _ in range(sum(max(len(cited) - self.max_citations, 0) for _, cited in sentences)):
            count("trec_support_cut")
        (judge,) = ctx.judges_for(self)
        texts = await self.cited(docs, [c for _, c in pairs])
        for _ in range(texts.count(None)):
            count("trec_support_not_in_corpus")
        shown = [(pair, text) for pair, text in zip(pairs, texts, strict=True) if text is not None]
        pairs = [pair for pair, _ in shown]
        chats = [messages(answer, sentences[i][0], text) for (i, _), text in shown]
        replies = await asyncio.gather(
            *(judge.chat(chat, step=f"judge:{self.name}", **self.sampling) for chat in chats)
        )
        labels = [label(reply.text) for reply in replies]
        for _ in range(labels.count(None)):
            count("trec_support_unparsed")
        weights = [WEIGHTS.get(found or "no support", 0.0) for found in labels]
        judged = [
            {"sentence": i, "docid": docs[c].id, "label": found} for (i, c), found in zip(pairs, labels, strict=True)
        ]
        ctx.record_step(JUDGED_STEP, outputs={"pairs": judged})
        if self.other is not None:
            for (i, c), found in zip(pairs, labels, strict=True):
                other = self.other.get((example.id, sentences[i][0], str(docs[c].id)))
                count(UNLABELLED if other is None else cell(other, level(found) or "no"))
        best = [0.0] * len(sentences)
        for (i, _), weight in zip(pairs, weights, strict=True):
            best[i] = max(best[i], weight)
        return {
            "trec_support_precision": sum(weights) / len(weights) if weights else None,
            "trec_support_recall": sum(best) / len(best),
        }
