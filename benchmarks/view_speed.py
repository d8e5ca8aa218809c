"""`ragbench view` on a CRAG Task 3-sized run: how long the Examples page takes to open.

Writes a synthetic run folder of 2,706 CRAG Task 3-shaped sample records (the dev set's size; each
record as the vanilla baseline writes it: 20 top sentences as documents, the RAG+KG prompt, retrieval,
entity-extraction and KG tool steps, the judge's call; about 35 kB a line), then measures, each on a
fresh server (cold: the sample file is indexed on the first request):

  index    the first rows request in-process: one pass over the file (offsets + table rows)
  http     the same through the HTTP server (GET /api/rows/...), then the first example page's JSON
           (which loads the plugin registry for the system's trace outline; `ragbench view` does that
           in the background at startup)
  browser  headless Chromium (when chromium + chromedriver are installed): from navigation to the
           rendered Examples page (first 100 rows), then one example's page (warm index)

The issue's budget is 2 s for the Examples page; the script prints each time and its share of it.

Run: python benchmarks/view_speed.py [--examples 2706] [--quick]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from ragbench._registry import installed_registry
from ragbench._reports.results.score_columns import summarise
from ragbench._view.catalog import RunCatalog
from ragbench._view.server import make_server
from ragbench._view.site import Site

BUDGET = 2.0
DOMAINS = ("finance", "sports", "music", "movie", "open")
TYPES = (
    "simple",
    "simple_w_condition",
    "comparison",
    "aggregation",
    "set",
    "multi-hop",
    "post-processing",
    "false_premise",
)
KEYS = ("accuracy", "hallucination", "missing", "score")


def sentence(i: int, k: int) -> str:
    return f"Sentence {k} of page {i % 50}: " + " ".join(f"word{(i * 7 + k * 13 + j) % 997}" for j in range(36))


def record(i: int) -> dict:
    docs = [
        {"id": f"q{i}:{k % 5}", "title": f"Page {k % 5}", "text": sentence(i, k), "url": f"https://example.org/{k}"}
        for k in range(20)
    ]
    context = "\n".join(d["text"] for d in docs)
    prompt = [
        {"role": "system", "content": "You are provided with a question and various references. " * 20},
        {"role": "user", "content": f"### Question\nquestion {i}?\n### References\n{context}\n" + "kg " * 600},
    ]
    right = i % 3 == 0
    scores = {"accuracy": float(right), "hallucination": float(i % 3 == 1), "missing": float(i % 3 == 2)}
    scores["score"] = scores["accuracy"] - scores["hallucination"]
    step = {"error": None, "seconds": 0.01, "prompt_tokens": 0, "completion_tokens": 0, "cached": False}
    trace = [
        {
            **step,
            "kind": "retrieval",
            "name": "retrieve",
            "request": {"retriever": "provided", "query": f"question {i}?", "k": 50},
            "response": {"ids": [d["id"] for d in docs]},
        },
        {
            **step,
            "kind": "retrieval",
            "name": "crag_sentences",
            "request": {"pages": 5},
            "response": {"sentences": 400, "top": list(range(20))},
        },
        {
            **step,
            "kind": "llm",
            "name": "entity_extraction",
            "request": {"messages": prompt[:1]},
            "response": {"texts": ['{"domain": "movie"}'], "finish_reason": "stop"},
        },
        {
            **step,
            "kind": "tool",
            "name": "crag_kg.open_search_entity_by_name",
            "request": {"query": "x"},
            "response": {"excerpt": "k" * 2000, "chars": 9000},
        },
        {
            **step,
            "kind": "llm",
            "name": "answer",
            "request": {"messages": prompt},
            "response": {"texts": [f"answer {i}"], "finish_reason": "stop"},
        },
    ]
    return {
        "index": i,
        "id": f"id-{i}",
        "question": f"question {i}?",
        "gold": {"answer": f"answer {i}", "alt_ans": []},
        "meta": {"domain": DOMAINS[i % 5], "question_type": TYPES[i % 8], "static_or_dynamic": "static"},
        "prediction": {"answer": f"answer {i}" if right else "i don't know", "docs": docs},
        "output": f"answer {i}",
        "trace": trace,
        "error": None,
        "scores": scores,
        "judge_trace": [
            {
                **step,
                "kind": "llm",
                "name": "judge:kddcup2024",
                "request": {"messages": prompt[:1]},
                "response": {"texts": ['{"accuracy": true}'], "finish_reason": "stop"},
            }
        ],
        "seconds": 1.0,
    }


def write_run(folder: Path, examples: int) -> Path:
    run = folder / "crag_t3_vanilla"
    (run / "samples").mkdir(parents=True)
    records = [record(i) for i in range(examples)]
    with (run / "samples" / "crag_t3.jsonl").open("w", encoding="utf-8") as handle:
        for r in records:
            handle.write(json.dumps(r) + "\n")
    details = {}
    for key in KEYS:
        entry = summarise([r["scores"][key] for r in records], None, 200, 0)
        entry["slices"] = {
            f: {
                v: summarise([r["scores"][key] for r in records if r["meta"][f] == v], None, 200, 0)
                for v in sorted({r["meta"][f] for r in records})
            }
            for f in ("domain", "question_type")
        }
        details[key] = {**entry, "n_none": 0, "n_errors": 0, "higher_is_better": key != "hallucination"}
    config = {"tasks": ["crag_t3"], "system": "vanilla", "model": "synthetic", "task_configs": {"crag_t3": {}}}
    (run / "results.json").write_text(
        json.dumps(
            {
                "results": {},
                "details": {"crag_t3": details},
                "complete": True,
                "counts": {"crag_t3": {"records": examples, "scored": examples}},
                "config": config,
                "cost": {},
                "date": "synthetic",
            }
        )
    )
    return run


def timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def serve(run: Path):
    server = make_server(Site(RunCatalog([str(run)]), registry=installed_registry()), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def browser_times(run: Path, rid: str) -> tuple[float, float] | None:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        return None
    if not (chromium and driver_path):
        return None
    options = Options()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-sync",
        "--disable-background-networking",
        f"--user-data-dir={tempfile.mkdtemp()}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    server, base = serve(run)
    try:
        driver.get(base + "/static/style.css")  # the browser is up; what follows is the page alone
        page = f"#/examples/{rid}/crag_t3"
        examples, _ = timed(
            lambda: (
                driver.get(f"{base}/{page}"),
                WebDriverWait(driver, 60, poll_frequency=0.01).until(
                    lambda d: (
                        d.execute_script("return document.body.dataset.ready") == page
                        and len(d.find_elements("css selector", "#examples tr")) == 101
                    )
                ),
            )
        )
        page = f"#/example/{rid}/crag_t3/1234"
        example, _ = timed(
            lambda: (
                driver.execute_script(f"location.hash = '{page}'"),
                WebDriverWait(driver, 60, poll_frequency=0.01).until(
                    lambda d: d.execute_script("return document.body.dataset.ready") == page
                ),
            )
        )
        return examples, example
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=2706)
    parser.add_argument("--quick", action="store_true", help="300 examples, no browser")
    args = parser.parse_args()
    examples = 300 if args.quick else args.examples
    with tempfile.TemporaryDirectory() as tmp:
        run = write_run(Path(tmp), examples)
        size = (run / "samples" / "crag_t3.jsonl").stat().st_size
        site = Site(RunCatalog([str(run)]), registry=installed_registry())
        rid = site.runs[0].rid
        index, rows = timed(lambda: site.data(f"rows/{rid}/crag_t3/0"))
        assert rows["total"] == examples
        server, base = serve(run)
        try:
            http, _ = timed(lambda: urllib.request.urlopen(f"{base}/api/rows/{rid}/crag_t3/0").read())
            middle = f"{base}/api/example/{rid}/crag_t3/{examples // 2}"
            example, body = timed(lambda: urllib.request.urlopen(middle).read())
            assert json.loads(body)["id"] == f"id-{examples // 2}"
        finally:
            server.shutdown()
            server.server_close()
        browser = None if args.quick else browser_times(run, rid)
    print(f"{examples} CRAG Task 3-shaped records, {size / 1e6:.1f} MB of samples")
    print("| step | seconds | share of the 2 s budget |\n|---|---:|---:|")
    lines = [
        ("index the sample file (in-process, cold)", index),
        ("GET first rows (HTTP, cold server)", http),
        ("GET the first example's page (HTTP; loads the plugin registry)", example),
    ]
    if browser is not None:
        lines += [
            ("browser: Examples page rendered (cold server)", browser[0]),
            ("browser: an example's page rendered (warm)", browser[1]),
        ]
    for name, seconds in lines:
        print(f"| {name} | {seconds:.3f} | {seconds / BUDGET:.2f} |")
    if browser is None and not args.quick:
        print("(browser times skipped: chromium, chromedriver or selenium not installed)")


if __name__ == "__main__":
    main()
