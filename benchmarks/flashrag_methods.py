"""FlashRAG's methods: FlashRAG's own pipeline against ragbench's system on the same simulated engine cost
(docs/performance.md, "FlashRAG's methods").

Both sides answer with the same fake model (tests/data/flashrag_parity/record_traces.py: it answers from the
prompt text, so every loop decision is the same on both sides) and pay the same engine cost: a generate call of
n requests costs `ceil(n / B) * overhead + n * per_request`, the engine computing at most B requests at once
(vLLM's max_num_seqs; ragbench's `scripted` engine options `overhead`, `per_request` and `batch_size`; FlashRAG's
fake vLLM sleeps the same in support/flashrag_side.py). The questions are the fixture's six, repeated with a
numbered suffix up to --examples, so that no two examples send the same prompt (a repeated prompt would be
answered once by ragbench's scheduler). FlashRAG advances some methods in lock-step over the dataset (one
generate call per step) and runs others one example (FLARE, Self-Ask) or one example's generation (SuRe,
REPLUG) at a time; ragbench runs every example's own code at once and its scheduler pools their calls, with
--max-inflight examples in flight (default 2 B: the examples one batch answered run while the next computes).

Walls run from the first model call to the end of the run on both sides (setup, model and index loading and a
first search left out); both score and save (FlashRAG as its run_exp.py runs a pipeline, do_eval=True). Printed
per method: FlashRAG's wall, generate calls and requests (when a Python with FlashRAG is given: --flashrag-python,
default /tmp/flashrag-venv/bin/python when it exists), ragbench's wall, its batching span (the first call to the
end of the last batch: what is left after it is the run's own end, the last batch's samples scored and written
and results.json made), its calls (equal to FlashRAG's requests when both ran the same method) and the requests
its engine computed (a repeated greedy prompt is answered once), FlashRAG's wall / ragbench's, and ragbench's
wall and batching span against the batching lower bound, scheduler_vs_baselines.py's (d''): sum over sampling
settings g of max(ceil(sent_g / B), chain_g) * overhead + sent * per_request (every batch holds requests of one
setting, at most B; chain_g the most calls of g one example waited on a batch for), plus the CPU time the fake
model itself spent answering. FLARE's model gives the recorder's token probabilities (`fake_flare_model`), as
FlashRAG's HF generator reads them from the same fake causal LM.
ragbench retrieves with its own BM25 over the fixture corpus, FlashRAG with its bm25s index.

Run: python benchmarks/flashrag_methods.py [--examples 500 --overhead 0.05 --per-request 0.002 --methods ...]
--quick: 6 examples (the fixture's questions once each), a cheap cost, ragbench's side only unless
--flashrag-python is given.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from ragbench._config.run_config import RunConfig
from ragbench._engines.local.embedded import embedded_safetensors_dir
from ragbench._engines.scripted import ScriptedEngine
from ragbench._registry import Registry, installed_registry
from ragbench._retrieval.index.building import build_index
from ragbench._run.evaluator import Evaluator
from ragbench._values.llm_request import Request

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.flashrag_parity import fake_flare_model as flare_model

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "data" / "flashrag_parity"
TASK = "nq_open_flashrag"
# FlashRAG's method -> (ragbench's system, its options as FlashRAG's run_exp.py sets the method)
METHODS = {
    "naive": ("vanilla", {"top_n": 5, "max_tokens": 32, "stop": ["<|eot_id|>"]}),
    "zero_shot": ("closed_book", {"max_tokens": 32, "stop": ["<|eot_id|>"]}),
    "iter_retgen": ("iter_retgen", {}),
    "ircot": ("ircot", {}),
    "self_ask": ("self_ask", {}),
    "flare": ("flare", {}),  # the recording's tokenizer, as FlashRAG's HF generator has: set in ragbench_side
    "sure": ("sure", {}),
    "skr": ("skr", {}),  # the judger's decisions scripted, as on FlashRAG's side (judgements_file)
    "adaptive_rag": ("adaptive_rag", {}),
    "r1_searcher": ("r1_searcher", {}),
    "search_r1": ("search_r1", {}),
    "autorefine": ("autorefine", {}),
    "simple_deep_searcher": ("simple_deep_searcher", {}),
    "o2_searcher": ("o2_searcher", {}),
    "corag": ("corag", {}),
    "rearag": ("rearag", {}),
}
DEFAULT_FLASHRAG = "/tmp/flashrag-venv/bin/python"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = _load("flashrag_record_traces", FIXTURES / "record_traces.py")


FIRST_CALL: list[float] = []  # when the run's first batch reached the model (the clock's start)
MODEL_SECONDS: list[float] = []  # CPU seconds the fake model spent answering (the engine's own work)
BATCH_ENDS: list[float] = []  # when each batch of the scripted engine ended
SENT: Counter = Counter()  # requests the engine computed, by sampling settings (the seed aside)


class TimedEngine(ScriptedEngine):
    """The scripted engine, noting when each batch ends (the run's batching span: first call to last answer) and
    the requests it computed, by sampling settings (the lower bound's input)."""

    def generate(self, requests):
        SENT.update(request.batch_key for request in requests)
        answers = super().generate(requests)
        BATCH_ENDS.append(time.perf_counter())
        return answers


def fake_model(request) -> str:
    """The recorder's continuation for a prompt (the scripted engine applies the stop strings)."""
    return _timed(
        RECORDER.respond,
        request.prompt if request.prompt is not None else "\n\n".join(m["content"] for m in request.message_dicts()),
    )


def fake_flare_model(request) -> dict:
    """FLARE's model: the recorder's fake causal LM as per-token answers with its token probabilities (the
    parity tests' `fake_flare_model`), so FLARE judges, searches and regenerates as on FlashRAG's side, where
    the same fake LM runs under FlashRAG's HF generator."""
    return _timed(flare_model, request)


def _timed(answer, request):
    """`answer(request)`, the run's first call and the fake model's own CPU time noted."""
    FIRST_CALL or FIRST_CALL.append(time.perf_counter())
    started = time.thread_time()
    out = answer(request)
    MODEL_SECONDS.append(time.thread_time() - started)
    return out


def questions_file(n: int, folder: Path) -> Path:
    base = [json.loads(line) for line in (FIXTURES / "questions.jsonl").read_text().splitlines()]
    path = folder / f"questions_{n}.jsonl"
    with path.open("w") as out:
        for i in range(n):
            item = base[i % len(base)]
            out.write(
                json.dumps(
                    {"id": f"q{i}", "question": f"{item['question']} (#{i})", "golden_answers": item["golden_answers"]}
                )
                + "\n"
            )
    return path


def judgements_file(method: str, n: int, folder: Path) -> Path:
    """The scripted judgements FlashRAG's side gives its judger (the fixture's, by question), by example id."""
    scripted = RECORDER.SKR_JUDGE if method == "skr" else RECORDER.ADAPTIVE_JUDGE
    path = folder / f"judgements_{method}.json"
    path.write_text(json.dumps({f"q{i}": scripted[i % len(scripted)] for i in range(n)}))
    return path


def settings(sampling: dict) -> str:
    """A request's sampling settings but its seed (what requests batched together share), as its trace has them."""
    return json.dumps({key: value for key, value in sampling.items() if key != "seed"}, sort_keys=True)


def lower_bound(batch: int, overhead: float, per_request: float, chains: dict[str, int]) -> tuple[float, int]:
    """(seconds, requests) of the batching lower bound over the requests the engine computed (SENT), as
    scheduler_vs_baselines.py's (d''): every batch holds requests of one sampling setting g, at most `batch` of
    them, so g needs ceil(sent_g / batch) batches, and at least chain_g of them, the most calls of g one example
    waited on a batch for (its calls are sequential: no two share a batch). A call answered from the response
    cache or joined to the same request in flight (a method repeating a greedy prompt: Iter-RetGen's rounds when a
    generation changes nothing, CoRAG's repeated sub-queries) is not sent; FlashRAG sends it."""
    sent = sum(SENT.values())
    traced = {key: settings(Request(prompt="", sampling=key).to_dict()["sampling"]) for key in SENT}  # as in traces
    batches = sum(max(math.ceil(n / batch), chains.get(traced[key], 0)) for key, n in SENT.items())
    return batches * overhead + sent * per_request, sent


def traced_calls(run_dir: Path) -> tuple[int, dict[str, int]]:
    """(the LLM calls the run's systems made, answered by the engine or not; by sampling settings, the most calls
    one example waited on a batch for: its calls not read from the response cache)."""
    calls, chains = 0, Counter()
    for line in (run_dir / "samples" / f"{TASK}.jsonl").read_text().splitlines():
        made = [step for step in json.loads(line)["trace"] if step["kind"] == "llm"]
        calls += len(made)
        waited = Counter(settings(step["request"]["sampling"]) for step in made if not step.get("cached"))
        for key, count in waited.items():
            chains[key] = max(chains[key], count)
    return calls, dict(chains)


def ragbench_side(
    method: str, data: Path, index: Path, work: Path, args: argparse.Namespace, registry: Registry
) -> dict:
    system, options = METHODS[method]
    if method in ("skr", "adaptive_rag"):
        options = {**options, "judgements": str(judgements_file(method, args.examples, work))}
    if method == "flare":  # the embedded model's folder, converted on first use ("embedded" finds only a converted one)
        options = {**options, "tokenizer": str(embedded_safetensors_dir())}
    out = work / f"ragbench_{method}"
    model = "fake_flare_model" if method == "flare" else "fake_model"
    config = RunConfig.of(
        tasks=[TASK],
        system=system,
        system_args=dict(options),
        data={TASK: str(data)},
        model=f"timed_scripted:flashrag_methods:{model}",
        model_args={"overhead": args.overhead, "per_request": args.per_request, "batch_size": args.batch_size},
        retriever="bm25",
        retriever_args={"index": str(index)},
        metrics=[],
        output=str(out),
        cache=str(work / f"cache_{method}.sqlite"),
        progress=False,
        bootstrap_iters=0,
        max_inflight=args.max_inflight,
    )
    evaluator = Evaluator(config, registry)
    FIRST_CALL.clear()
    MODEL_SECONDS.clear()
    BATCH_ENDS.clear()
    SENT.clear()
    outcome = evaluator.run()
    seconds = time.perf_counter() - FIRST_CALL[0]
    calls, chains = traced_calls(out)
    bound, sent = lower_bound(args.batch_size, args.overhead, args.per_request, chains)
    return {
        "seconds": seconds,
        "batching": BATCH_ENDS[-1] - FIRST_CALL[0],
        "bound": bound + sum(MODEL_SECONDS),
        "calls": calls,
        "sent": sent,
        "complete": outcome.results.get("complete"),
    }


def flashrag_side(method: str, data: Path, args: argparse.Namespace) -> dict | None:
    if not args.flashrag_python or not Path(args.flashrag_python).exists():
        return None
    command = [
        args.flashrag_python,
        str(HERE / "support" / "flashrag_side.py"),
        method,
        str(data),
        "--overhead",
        str(args.overhead),
        "--per-request",
        str(args.per_request),
        "--batch-size",
        str(args.batch_size),
        "--work",
        args.flashrag_work,
        "--src",
        args.flashrag_src,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--overhead", type=float, default=0.05, help="seconds per batch")
    parser.add_argument("--per-request", type=float, default=0.002, help="seconds per request in a batch")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=256,
        help="requests the engine computes at once (vLLM's max_num_seqs), on both sides",
    )
    parser.add_argument(
        "--max-inflight",
        type=int,
        default=None,
        help="ragbench's examples in flight (default: two "
        "batches, so the examples one batch answered run while the next computes)",
    )
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument(
        "--flashrag-python",
        default=None,
        help=f"a Python with FlashRAG installed (default "
        f"{DEFAULT_FLASHRAG} when it exists; --quick: none unless given)",
    )
    parser.add_argument("--flashrag-src", default="/tmp/flashrag-src")
    parser.add_argument("--flashrag-work", default="/tmp/flashrag-parity-work")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.overhead, args.per_request = 6, 0.005, 0.0005
    elif args.flashrag_python is None and Path(DEFAULT_FLASHRAG).exists():
        args.flashrag_python = DEFAULT_FLASHRAG
    args.max_inflight = args.max_inflight or 2 * args.batch_size
    sys.modules.setdefault("flashrag_methods", sys.modules[__name__])  # the scripted engine's fake_model: this one
    registry = installed_registry()  # one for every method's run (a run does not change its registry)
    registry.add_catalog({"engines": {"timed_scripted": {"target": "flashrag_methods:TimedEngine"}}}, "benchmark")
    systems = set(registry.names("systems"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = questions_file(args.examples, work)
        index = work / "index"
        build_index(FIXTURES / "corpus.jsonl", index, "bm25", progress=False, registry=registry)
        print(
            f"{args.examples} examples; engine cost {args.overhead}s per batch + {args.per_request}s per request, "
            f"batch limit {args.batch_size}"
        )
        print(
            f"{'method':<21} {'FlashRAG s':>10} {'generates':>9} {'calls':>6} {'ragbench s':>10} {'batching s':>10} "
            f"{'calls':>6} "
            f"{'sent':>6} {'bound s':>8} {'FlashRAG/ragbench':>17} {'ragbench/bound':>14} {'batching/bound':>14}"
        )
        for method in args.methods:
            system = METHODS[method][0]
            if system not in systems:
                print(f"{method:<21} (no ragbench system {system!r})")
                continue
            ours = ragbench_side(method, data, index, work, args, registry)
            theirs = flashrag_side(method, data, args)
            if theirs is None or "error" in theirs:
                flash = f"{'-':>10} {'-':>9} {'-':>6}"
                ratio = f"{(theirs or {}).get('error', 'no FlashRAG')[:17]:>17}"
            else:
                flash = f"{theirs['seconds']:>10.2f} {theirs['batches']:>9} {theirs['requests']:>6}"
                ratio = f"{theirs['seconds'] / ours['seconds']:>16.2f}x"
            print(
                f"{method:<21} {flash} {ours['seconds']:>10.2f} {ours['batching']:>10.2f} {ours['calls']:>6} "
                f"{ours['sent']:>6} {ours['bound']:>8.2f} {ratio} {ours['seconds'] / ours['bound']:>13.2f}x "
                f"{ours['batching'] / ours['bound']:>13.2f}x"
            )


if __name__ == "__main__":
    main()
