"""umbrela's modified qrels and the nDCG@10 of a run on them (umbrela 0.0.7's `evaluation.evaluate_judge_results`
with `result_file`, num_samples 1): the qrels file read as umbrela's `qrel_utils.get_qrels` reads it (an id of
digits keyed by its integer, so written back without leading zeros; a pair given twice keeps its first place and
its last label), each pair the judge graded given the judge's grade, every other pair its label as written, one
`QID Q0 DOCID LABEL` line a pair in the qrels' order (`common_utils.write_modified_qrel`); and the run's nDCG@10 on
the original file and on the modified one as umbrela's `fetch_ndcg_score` prints them (`trec_eval -c -l 2 -m
ndcg_cut.10`: the "all" value, four decimals; `-l 2` changes no nDCG), by pytrec_eval (`trec_measures`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.data import given_text
from ragbench.api.retrieval import relevance, trec_eval_all

Pairs = dict[str, dict[str, str]]  # qid -> docid -> label as written, umbrela's keys (`umbrela_id`)


def umbrela_id(value: str) -> str:
    """An id as umbrela keys and writes it: one of digits as its integer ("007" -> "7"), any other as it is."""
    return str(int(value)) if value.isdigit() else value


def read_pairs(path: Path) -> Pairs:
    """The qrels file's pairs as umbrela's `get_qrels` reads them (module docstring)."""
    pairs: Pairs = {}
    for number, line in enumerate(given_text(path, "qrels (QID 0 DOCID RELEVANCE)", "--qrels").splitlines(), 1):
        fields = line.split()
        if len(fields) != 4 or not label_value(fields[3]):
            raise ConfigError(
                f"{path}:{number}: not a qrels line (QID 0 DOCID RELEVANCE, the relevance a whole number from "
                "-2147483648 to 2147483647, trec_eval's C int): "
                f"{line[:80]!r}"
            )
        try:
            qid, docid = umbrela_id(fields[0]), umbrela_id(fields[2])
        except ValueError:  # digits int() does not read (e.g. superscripts): umbrela stops there too
            raise ConfigError(
                f"{path}:{number}: an id of digits umbrela cannot read as a number: {line[:80]!r}"
            ) from None
        pairs.setdefault(qid, {})[docid] = fields[3]
    return pairs


def label_value(label: str) -> bool:
    """Whether `label` is a whole number trec_eval holds (`relevance`), written in ASCII digits as umbrela reads it."""
    try:
        relevance(label)
    except ValueError:
        return False
    return label.removeprefix("-").isdecimal()


def modified(pairs: Pairs, judged: Mapping[tuple[str, str], int]) -> str:
    """umbrela's modified qrels file: `pairs` in their order, a judged pair's label its grade (`judged`, by umbrela's
    keys)."""
    lines = []
    for qid, docs in pairs.items():
        for docid, label in docs.items():
            lines.append(f"{qid} Q0 {docid} {judged.get((qid, docid), label)}\n")
    return "".join(lines)


def ndcg_at_10(qrels_lines: Iterable[str], run: Mapping[str, Mapping[str, float]]) -> str:
    """The "all" nDCG@10 `trec_eval -c -l 2 -m ndcg_cut.10` prints for `run` on the qrels lines, as printed."""
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_lines:
        qid, _, docid, label = line.split()
        qrels.setdefault(qid, {})[docid] = int(label)
    return f"{trec_eval_all(qrels, run, ['ndcg_cut.10'])['ndcg_cut_10']:.4f}"
