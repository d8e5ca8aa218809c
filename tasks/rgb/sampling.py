"""The passages RGB's evalue.py shows a model: `processdata` (chen700564/RGB evalue.py), reproduced draw for
draw. evalue.py seeds Python's `random` with 2333 before each record; a `random.Random(2333)` per record makes
the same draws without touching the process's global generator. tests/tasks/rgb/test_rgb.py pins the result to
upstream's own processdata run on the same records.

Quirks kept for parity: on the information-integration sets every group's first (shuffled) passage is shown,
even where the groups outnumber the positive slots; on the counterfactual sets `noise_rate` counts negatives
and `correct_rate` the true passages shown beside the wrong ones."""

from __future__ import annotations

import math
import random
from typing import Any

SEED = 2333  # evalue.py: random.seed(2333) before each record
SETTINGS = ("plain", "int", "fact")  # en/zh, en_int/zh_int, en_fact/zh_fact


def sample_passages(
    record: dict[str, Any], setting: str, noise_rate: float, passage_num: int, correct_rate: float = 0.0
) -> list[str]:
    """The passages evalue.py shows for `record` (one line of an RGB file), in the order shown."""
    rng = random.Random(SEED)
    neg_num = math.ceil(passage_num * noise_rate)
    pos_num = passage_num - neg_num
    if setting == "int":
        docs = _integration(record, rng, pos_num, passage_num)
    elif setting == "fact":
        docs = _counterfactual(record, rng, neg_num, passage_num, correct_rate)
    else:
        if noise_rate == 1:
            neg_num, pos_num = passage_num, 0
        elif neg_num > len(record["negative"]):
            neg_num = len(record["negative"])
            pos_num = passage_num - neg_num
        elif pos_num > len(record["positive"]):
            pos_num = len(record["positive"])
            neg_num = passage_num - pos_num
        docs = record["positive"][:pos_num] + record["negative"][:neg_num]
    rng.shuffle(docs)
    return docs


def _integration(record: dict[str, Any], rng: random.Random, pos_num: int, passage_num: int) -> list[str]:
    """One passage per answer's group first, then the groups' further passages in turn, up to pos_num;
    negatives fill the rest. The groups are shuffled in place upstream; here copies are."""
    if not all(isinstance(group, list) for group in record["positive"]):  # upstream's shuffle stops on one
        raise TypeError("expected one list of passages per answer item")
    groups = [list(group) for group in record["positive"]]
    for group in groups:
        rng.shuffle(group)
    docs = [group[0] for group in groups]
    if len(docs) < pos_num:
        for i in range(1, max(len(group) for group in groups)):
            for group in groups:
                if len(group) > i:
                    docs.append(group[i])
                    if len(docs) == pos_num:
                        break
            if len(docs) == pos_num:
                break
    neg_num = passage_num - len(docs)
    return docs + (record["negative"][:neg_num] if neg_num > 0 else [])


def _counterfactual(
    record: dict[str, Any], rng: random.Random, neg_num: int, passage_num: int, correct_rate: float
) -> list[str]:
    """Wrong passages (positive_wrong) at sampled positions, true ones (positive) at other positions for
    correct_rate, then the first negatives."""
    correct_num = math.ceil(passage_num * correct_rate)
    pos_num = passage_num - neg_num - correct_num
    indexes = list(range(len(record["positive"])))
    selected = rng.sample(indexes, min(len(indexes), pos_num))
    docs = [record["positive_wrong"][i] for i in selected]
    remain = [i for i in indexes if i not in selected]
    if correct_num > 0 and remain:
        docs += [record["positive"][i] for i in rng.sample(remain, min(len(remain), correct_num))]
    if neg_num > 0:
        docs += record["negative"][:neg_num]
    return docs
