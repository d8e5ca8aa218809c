"""Self-RAG's trace as the viewer's timeline (`SelfRag.trace_outline`): the retrieval decision with its
ratio, then the candidates with their critique scores and the chosen one marked. The calls are matched
to the candidates recorded in the prediction's extras by order: the i-th "selfrag:passage" call is the
i-th passage (short form), the i-th "selfrag:segment" call the i-th node of the beam-search tree after
the root (long form; the tree is built in call order)."""

from __future__ import annotations

from typing import Any

from ragbench.api import Step
from ragbench.api.data import JsonObject, JsonValue
from ragbench.api.trace import outline

SCORES = ("final_score", "relevance_score", "ground_score", "utility_score", "seq_score")


def _decision(index: int, extras: dict[str, Any]) -> JsonObject:
    return {
        "group": "retrieval decision",
        "items": [{"step": index}],
        "info": {"retrieval_ratio": extras.get("retrieval_ratio"), "retrieve": extras.get("retrieved")},
    }


def short_form(trace: list[Step], extras: dict[str, Any]) -> list[JsonObject]:
    items: list[JsonObject] = []
    passages = list(extras.get("passages") or [])
    number = 0
    for index, step in enumerate(trace):
        if step.name == "selfrag:decide":
            items.append(_decision(index, extras))
        elif step.name == "selfrag:passage" and number < len(passages):
            scores = passages[number]
            items.append(
                {
                    "group": f"passage {number + 1}: {scores.get('title') or scores.get('doc_id') or ''}",
                    "items": [{"step": index}],
                    "chosen": extras.get("best_passage") == number,
                    "info": {"doc_id": scores.get("doc_id"), **{k: scores.get(k) for k in SCORES if k in scores}},
                }
            )
            number += 1
        else:
            items.append({"step": index})
    return items


def _chosen_nodes(extras: dict[str, Any]) -> set[int]:
    """The tree nodes of the path the answer was made from (the recorded segments, best leaf first)."""
    tree = extras.get("tree") or []
    for leaf in (extras.get("levels") or [[]])[-1]:
        path: list[Any] = []
        node = leaf
        while node is not None:
            path.insert(0, node)
            node = tree[node]["parent"]
        if [tree[n]["pred"] for n in path] == extras.get("segments"):
            return set(path)
    return set()


def long_form(trace: list[Step], extras: dict[str, Any]) -> list[JsonObject]:
    tree = extras.get("tree") or []
    segments = [i for i, step in enumerate(trace) if step.name == "selfrag:segment"]
    if len(segments) != len(tree) - 1:
        return outline(trace)  # not the tree these calls made (an older record): the plain outline
    chosen, depth = _chosen_nodes(extras), {0: 0}
    node_of = {step: k + 1 for k, step in enumerate(segments)}
    items: list[JsonObject] = []
    levels: dict[int, list[JsonValue]] = {}  # each segment level's group's items
    for index, step in enumerate(trace):
        if step.name == "selfrag:decide":
            items.append(_decision(index, extras))
        elif index in node_of:
            node = node_of[index]
            depth[node] = depth[tree[node]["parent"]] + 1
            if depth[node] not in levels:
                levels[depth[node]] = []
                items.append({"group": f"segment {depth[node]}", "items": levels[depth[node]]})
            entry = tree[node]
            levels[depth[node]].append(
                {
                    "group": f"node {node}: passage {entry.get('doc_id')} (after node {entry['parent']})",
                    "items": [{"step": index}],
                    "chosen": node in chosen,
                    "info": {"path_score": entry.get("score"), **{k: entry[k] for k in SCORES if k in entry}},
                }
            )
        else:
            items.append({"step": index})
    return items
