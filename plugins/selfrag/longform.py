"""Self-RAG long form: segment-level beam search over the static passages (run_long_form_static.py
`call_model_beam_batch` + `run_step_generation_batch`) and the ASQA citation assembly of its main().
The generations of one tree level go to the scheduler together."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from ragbench.api import Context, Document
from ragbench.api.engines import Response

from .prompts import (
    NO_RETRIEVAL,
    REFLECTION_TOKENS,
    RETRIEVAL_TOKENS,
    cite_segments,
    clean_segment,
    evidence_prompt,
    fix_spacing,
)
from .scoring import LONG_FORM_WINDOW, MISSING, critique, is_token, logprob, token_positions
from .shapes import SelfRagTrace, Settings

# The SelfRag system (system.py), which imports this module: not imported back (no import cycle).
SelfRag = Any

DECISION_TOKENS = 25  # call_model_beam_batch's adaptive decision generates 25 tokens


def relabel_no_retrieval(text: str, response: Response, threshold: float | None) -> str:
    """run_step_generation_batch: each "[No Retrieval]" of a segment becomes "[Retrieval]" when
    (P(Ret) + P(Continue)) / (P(Ret) + P(NoRet)) > threshold at that token's position; as upstream,
    the text after the last one also gets "[No Retrieval]" appended and the bool is compared with the
    threshold again. Upstream raises TypeError without a threshold; here nothing is relabelled then."""
    if NO_RETRIEVAL not in text:
        return text
    positions = [p for p in token_positions(response) if is_token(p, (NO_RETRIEVAL,))]
    remap: dict[int, bool] = {}
    for order, position in enumerate(positions):
        p = {t: math.exp(logprob(position, t)) for t in RETRIEVAL_TOKENS}
        if threshold is None:
            remap[order] = False
            continue
        if p["[Retrieval]"] + p["[No Retrieval]"] != 0.0:
            retrieve: float = (p["[Retrieval]"] + p["[Continue to Use Evidence]"]) / (
                p["[Retrieval]"] + p["[No Retrieval]"]
            ) > threshold
        else:
            retrieve = 0.0
        remap[order] = retrieve > threshold
    return "".join(
        part + ("[Retrieval]" if remap.get(i) else NO_RETRIEVAL) for i, part in enumerate(text.split(NO_RETRIEVAL))
    )


async def step_generation(
    system: SelfRag, ctx: Context, prompt: str, docs: list[Document], w_use: float
) -> list[tuple[str, float, dict[str, float]]]:
    """One continuation per passage, scored; (relabelled text, step score, score parts) each."""
    responses = await asyncio.gather(
        *[
            ctx.llm.generate(
                evidence_prompt(prompt, d.title, d.text),
                step="selfrag:segment",
                **system.sampling(LONG_FORM_WINDOW, logprob_tokens=REFLECTION_TOKENS),
            )
            for d in docs
        ]
    )
    out = []
    for response in responses:
        score = critique(
            response,
            w_rel=system.w_rel,
            w_sup=system.w_sup,
            w_use=w_use,
            use_groundness=system.use_groundness,
            use_utility=system.use_utility,
            use_seqscore=system.use_seqscore and system.long_form_seqscore,
            long_form=True,
            long_form_utility_bug=system.long_form_utility_bug,
        )
        out.append((relabel_no_retrieval(response.text, response, system.threshold), score.final, score.to_dict()))
    return out


async def decide(system: SelfRag, ctx: Context, prompt: str, trace: SelfRagTrace) -> bool:
    """Adaptive decision of call_model_beam_batch: retrieve only if the first paragraph of a 25-token
    generation shows "[Retrieval]" (never, under skip_special_tokens=True) and the normalised
    probability of [Retrieval] at position 0 exceeds the threshold."""
    response = await ctx.llm.generate(
        prompt,
        step="selfrag:decide",
        **system.sampling(LONG_FORM_WINDOW, max_tokens=DECISION_TOKENS, logprob_tokens=RETRIEVAL_TOKENS),
    )
    text = response.text.split("\n\n")[0]
    trace["decision_output"] = text
    if "[Retrieval]" not in text or system.threshold is None:
        return False
    positions = token_positions(response)
    p = {t: math.exp(logprob(positions[0], t) if positions else MISSING) for t in ("[Retrieval]", "[No Retrieval]")}
    ratio = p["[Retrieval]"] / (p["[Retrieval]"] + p["[No Retrieval]"])
    trace["retrieval_ratio"] = ratio
    threshold: float = system.threshold  # not None: checked above
    return ratio > threshold


async def beam_search(
    system: SelfRag, ctx: Context, prompt: str, docs: list[Document], w_use: float, trace: SelfRagTrace
) -> list[list[dict[str, Any]]]:
    """The tree of call_model_beam_batch; returns the node paths (root first) ending at the deepest
    non-empty level, best first."""
    tree: list[dict[str, Any]] = [
        {"prompt": prompt, "pred": "[Retrieval]", "processed_pred": "", "score": None, "ctx": None, "parent": None}
    ]
    level, terminated = [0], False
    levels = []
    for _ in range(1, system.max_depth):
        if terminated:
            break
        expand = []
        for node in level:
            if tree[node]["pred"] == "</s>":
                terminated = True
            elif "[Retrieval]" in tree[node]["pred"]:
                expand.append(node)
        steps = await asyncio.gather(
            *[step_generation(system, ctx, tree[n]["prompt"] + tree[n]["processed_pred"], docs, w_use) for n in expand]
        )
        children = []
        for node, results in zip(expand, steps):
            parent = tree[node]
            prev = parent["processed_pred"]
            for doc, (pred, score, parts) in zip(docs, results):
                # upstream reassigns prev_generation per child, so a child's prompt continues its
                # previous sibling's segment (chain_sibling_segments=True)
                child = {
                    "prompt": parent["prompt"] + prev,
                    "pred": pred,
                    "ctx": doc,
                    "parent": node,
                    "parts": parts,
                    "score": score * parent["score"] if parent["score"] is not None else score,
                }
                child["processed_pred"] = pred[: pred.index("[Retrieval]")] if "[Retrieval]" in pred else pred
                if system.chain_sibling_segments:
                    prev = child["processed_pred"]
                tree.append(child)
                children.append(len(tree) - 1)
        level = sorted(children, key=lambda n: tree[n]["score"], reverse=True)[: system.beam_width]
        if level:
            levels.append(level)
    trace["tree"] = [
        {
            "parent": n["parent"],
            "pred": n["pred"],
            "score": n["score"],
            "doc_id": n["ctx"].id if n["ctx"] is not None else None,
            **n.get("parts", {}),
        }
        for n in tree
    ]
    trace["levels"] = levels
    paths: list[list[Any]] = []
    for node in levels[-1] if levels else [0]:
        path: list[Any] = []
        while node is not None:
            path.insert(0, tree[node])
            node = tree[node]["parent"]
        if system.ignore_cont:
            path = [n for n in path if "[No support / Contradictory]" not in n["processed_pred"]]
        paths.append(path)
    return paths


async def long_form(
    system: SelfRag, ctx: Context, prompt: str, docs: list[Document], run: Settings
) -> tuple[str, list[Document], SelfRagTrace]:
    """The answer text, the passages it cites (in citation order) and the trace."""
    trace: SelfRagTrace = {"form": "long", "mode": run["mode"], "ndocs": len(docs)}
    if run["mode"] == "always_retrieve":
        retrieve = True
    elif run["mode"] == "no_retrieval":  # upstream: UnboundLocalError; here the no-retrieval answer
        retrieve = False
    else:
        retrieve = await decide(system, ctx, prompt, trace)
    trace["retrieved"] = retrieve = bool(retrieve and docs)
    if not retrieve:
        response = await ctx.llm.generate(prompt + NO_RETRIEVAL, step="selfrag:no_retrieval", **system.sampling())
        return clean_segment(response.text.split("\n\n")[0]), [], trace

    paths = await beam_search(system, ctx, prompt, docs, run["w_use"], trace)
    texts = [" ".join(n["processed_pred"] for n in path) for path in paths]
    chosen = paths[1] if len(paths) > 1 and not clean_segment(texts[0]) else paths[0]  # main(): path 1 if 0 is empty
    trace["depth"] = len(chosen) - 1
    trace["segments"] = [n["pred"] for n in chosen]
    if not ctx.task.prompting.cites:  # FactScore branch of main(): the best path's text, no citations
        return fix_spacing(clean_segment(texts[0])), [n["ctx"] for n in paths[0] if n["ctx"] is not None], trace
    output, kept = cite_segments(
        [n["processed_pred"] for n in chosen], [n["ctx"] for n in chosen], system.citation_numbering
    )
    return output, kept, trace
