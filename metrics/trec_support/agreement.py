"""The support judge's labels against another's (the assessors', or another judge's run of the released script):
the overview's agreement analysis of support. `labels=FILE` is JSONL, one judged pair a line, as the released
script writes its output: `{"narrative_id", "statement", "citation_id", "support_output"}` (the label read from
the reply as ragbench reads its judge's), or with `"label"` ("Full Support", "Partial Support", "No Support") in
place of `support_output`. A pair is the topic, the sentence's text and the cited docid. Each pair ragbench judges
is counted in its cell (`trec_support_labels_O_judged_J`: the file's label O, the judge's J, each full, partial or
no; a reply without a label is the judge's "no", as it is weighed) or as unlabelled; the run's Cohen's kappa over
the three labels and the share of exact matches are corpus keys computed from the counts, as Thakur et al. report
(the share of perfect matches on the three-level scale, and kappa)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from ragbench.api import ConfigError, KeySpec, SampleRecord, cohen_kappa
from ragbench.api.data import given_text_lines, parse_json

from .labels import WEIGHTS, label

LEVELS = ("full", "partial", "no")
UNLABELLED = "trec_support_unlabelled"
AGREEMENT_KEYS = {
    "trec_support_labels_kappa": KeySpec(True, (-1, 1)),
    "trec_support_labels_exact": KeySpec(True, (0, 1)),
}
Pair = tuple[str, str, str]  # topic, sentence text, cited docid


def cell(other: str, judged: str) -> str:
    return f"trec_support_labels_{other}_judged_{judged}"


COUNTERS = {
    cell(o, j): f"pairs the labels file calls {o} support that the judge called {j}" for o in LEVELS for j in LEVELS
}
COUNTERS[UNLABELLED] = "judged pairs the labels file has no readable label for: left out of the agreement"


def level(name: str | None) -> str | None:
    """ "full support" -> "full"; None stays None."""
    return None if name is None else name.split()[0]


def read_labels(path: Path) -> dict[Pair, str | None]:
    """The file's label of each pair (None where unreadable); a line that is not such a pair is refused, naming it."""
    out: dict[Pair, str | None] = {}
    for number, text in given_text_lines(path, "TREC RAG support labels (JSONL)", "metric trec_support: labels"):
        try:
            row = parse_json(text)  # a line nested too deeply: a ValueError, named below
            pair = (str(row["narrative_id"]), str(row["statement"]), str(row["citation_id"]))
            given = row["label"] if "label" in row else row["support_output"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f'metric trec_support: {path}:{number}: not a judged pair {{"narrative_id", "statement", '
                f'"citation_id", "label" or "support_output"}} ({exc!r})'
            ) from exc
        name = " ".join(str(given).split()).lower() if "label" in row else label(str(given))
        out[pair] = level(name if name in WEIGHTS else None)
    return out


def agreement(samples: list[SampleRecord], metric: str) -> Mapping[str, float | None]:
    counts: Counter[str] = Counter()
    for sample in samples:
        counts.update(sample.counted.get(metric, {}))
    pairs = [(o, j) for o in LEVELS for j in LEVELS for _ in range(counts[cell(o, j)])]
    if not pairs:
        return dict.fromkeys(AGREEMENT_KEYS)
    ranks = {name: float(i) for i, name in enumerate(LEVELS)}
    return {
        "trec_support_labels_kappa": cohen_kappa([ranks[o] for o, _ in pairs], [ranks[j] for _, j in pairs]),
        "trec_support_labels_exact": sum(o == j for o, j in pairs) / len(pairs),
    }
