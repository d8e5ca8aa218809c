"""Citation evaluation cost: NLI requests per item and items per second on 1,000 QAMPARI and
1,000 ELI5 items, scored with `ragbench score` machinery (recorded system, real Evaluator, ALCE
metrics) and a scripted NLI engine whose batch cost is `overhead + per_request * n`.

Items are synthetic but ALCE-shaped: 5 shown docs drawn from a small pool (so different items
share documents), outputs with several statements citing 1-4 docs (duplicates, out-of-range and
uncited statements included), and QAMPARI answers repeated across items (so identical
(premise, hypothesis) pairs recur, as they do for popular entities). The scripted engine says
"1" for about half of the requests (a regex on the hypothesis), which drives the precision checks.

Reported per dataset:
  asked      entailment questions the metrics asked (what eval.py would send to the model, one by one)
  computed   distinct (premise, hypothesis) pairs sent to the engine (each once)
  batches    engine calls, and the mean batch size
  items/s    end-to-end scoring throughput, and the modelled engine time of eval.py's one-by-one
             loop (asked x (overhead + per_request)) against ragbench's measured wall time

Run: python benchmarks/citation_eval.py [--items 1000] [--overhead 0.02] [--per-request 0.001]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from ragbench._registry import installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig

WORDS = (
    "river city film album director capital population wrote sang played married founded "
    "located country genre author team league station county mountain language novel series"
).split()


def passage(rng: random.Random) -> dict:
    return {
        "id": str(rng.randrange(10**6)),
        "title": " ".join(rng.sample(WORDS, 2)).title(),
        "text": " ".join(rng.choice(WORDS) for _ in range(60)),
    }


def cite(rng: random.Random) -> str:
    count = rng.choice([0, 1, 1, 2, 2, 3, 4])
    return "".join(f"[{rng.choice([1, 2, 3, 4, 5, 5, 6])}]" for _ in range(count))


def make_items(dataset: str, items: int, rng: random.Random):
    pool = [passage(rng) for _ in range(400)]
    entities = [" ".join(rng.sample(WORDS, 2)).title() for _ in range(300)]
    records, predictions = [], []
    for index in range(items):
        docs = rng.sample(pool, 5)
        if dataset == "qampari":
            answers = rng.sample(entities[:60], rng.randint(3, 8))
            question = rng.choice(
                [
                    "Which films did the director make?",
                    "Which novels were set in the city?",
                    "Which albums did the band record?",
                ]
            )
            record = {
                "id": f"q{index}",
                "question": question,
                "answers": [[a] for a in answers],
                "answer": ", ".join(answers) + ".",
                "docs": docs,
            }
            output = ", ".join(f"{a} {cite(rng)}".strip() for a in rng.sample(answers, len(answers) - 1)) + "."
        else:
            question = f"Why does the {rng.choice(WORDS)} {rng.choice(WORDS)}?"
            claims = [" ".join(rng.sample(WORDS, 6)) + "." for _ in range(3)]
            record = {
                "question": question,
                "question_ctx": "",
                "answer": " ".join(claims),
                "claims": claims,
                "docs": docs,
            }
            output = " ".join(
                f"The {' '.join(rng.sample(WORDS, 5))} {cite(rng)}.".replace(" .", ".")
                for _ in range(rng.randint(2, 5))
            )
        records.append(record)
        predictions.append({"id": record.get("id", str(index)), "output": output, "docs": docs})
    return records, predictions


def measure(dataset: str, items: int, overhead: float, per_request: float, folder: Path) -> dict:
    records, predictions = make_items(dataset, items, random.Random(7))
    data = folder / f"{dataset}.json"
    data.write_text(json.dumps(records))
    preds = folder / f"{dataset}_predictions.jsonl"
    preds.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    rules = folder / "nli_rules.json"
    rules.write_text(
        json.dumps([{"pattern": r"hypothesis: .*[aeiou][nrst] [a-m]", "response": "1"}, {"response": "0"}])
    )
    task = f"alce_{dataset}"
    config = RunConfig.of(
        tasks=[task],
        system="recorded",
        system_args={"path": str(preds)},
        data={task: str(data)},
        nli=f"scripted:{rules}",
        nli_args={"overhead": overhead, "per_request": per_request, "batch_size": 64},
        task_args={"rouge": False, **({"claims_nli": False} if dataset == "eli5" else {})},
        output=str(folder / dataset),
        progress=False,
        bootstrap_iters=0,
    )
    started = time.perf_counter()
    results = Evaluator(config, registry=installed_registry()).run()
    wall = time.perf_counter() - started
    nli, cost = results.results["cost"]["nli"], results.results["cost"]
    return {
        "dataset": dataset,
        "items": items,
        "asked": nli["requests"],
        "computed": nli["computed"],
        "batches": cost["batches"],
        "wall": wall,
        "one_by_one_engine_seconds": nli["requests"] * (overhead + per_request),
        "citation_rec": results.results["results"][task]["citation_rec"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--overhead", type=float, default=0.02, help="seconds per engine call")
    parser.add_argument("--per-request", type=float, default=0.001, help="seconds per request in a call")
    parser.add_argument("--quick", action="store_true", help="a small run for CI (20 items)")
    args = parser.parse_args()
    if args.quick:
        args.items = 20
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in ("qampari", "eli5"):
            r = measure(dataset, args.items, args.overhead, args.per_request, Path(tmp))
            print(
                f"{dataset}: {r['items']} items, NLI asked {r['asked']} ({r['asked'] / r['items']:.2f}/item), "
                f"computed {r['computed']} ({r['computed'] / r['items']:.2f}/item, "
                f"{r['computed'] / r['asked']:.1%} of asked) in {r['batches']} batches "
                f"(mean {r['computed'] / max(1, r['batches']):.1f}); {r['items'] / r['wall']:.1f} items/s "
                f"({r['wall']:.2f} s; eval.py's one-by-one loop would spend {r['one_by_one_engine_seconds']:.1f} s "
                f"in the engine alone: {r['one_by_one_engine_seconds'] / r['wall']:.1f}x); "
                f"citation_rec {r['citation_rec']:.2f}"
            )


if __name__ == "__main__":
    main()
