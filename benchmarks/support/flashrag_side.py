"""FlashRAG's own pipeline under a simulated engine cost: the FlashRAG half of flashrag_methods.py.

Run by flashrag_methods.py with a separate Python that can import FlashRAG (RUC-NLPIR/FlashRAG at the commit
tests/data/flashrag_parity/NOTES.md names) with its dependencies, the environment the parity fixtures were
recorded in (NOTES.md names its versions: Python 3.11, transformers 5.24, bm25s 0.3.16, PyStemmer, numba);
FlashRAG is not a dependency of ragbench. It runs one method's
pipeline unchanged, as tests/data/flashrag_parity/record_traces.py does (the fake model that answers from
the prompt text, FlashRAG's BM25 over the fixture corpus), on a questions file, with every `generate`
of the fake vLLM (or, for FLARE and REPLUG, of the fake causal LM under FlashRAG's HF generator) sleeping
`ceil(prompts / batch_size) * overhead + per_request * prompts` (the scripted engine's cost model: at
most batch_size requests at once), and prints
one JSON line: {"seconds", "batches", "requests"}. The pipeline runs as examples/methods/run_exp.py runs it
(`pipeline.run(data)`, do_eval=True: FlashRAG's em, f1 and acc scored, intermediate_data.json and metric_score.txt
saved), as ragbench scores the task's em, hotpot_f1 and cover_em and writes its samples and results. The seconds
run from the pipeline's first model call to its end (as ragbench's in flashrag_methods.py): setup and a first
search before it are left out on both sides.

    python flashrag_side.py METHOD QUESTIONS.jsonl --overhead 0.05 --per-request 0.002 --work DIR --src SRC
"""

import argparse
import importlib.util
import json
import math
import os
import time

RECORDER = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "flashrag_parity", "record_traces.py"
)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("method")
    ap.add_argument("questions")
    ap.add_argument("--overhead", type=float, required=True)
    ap.add_argument("--per-request", type=float, required=True)
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--work", required=True, help="a folder holding models/smollm2-base (tokenizer files)")
    ap.add_argument("--src", required=True, help="FlashRAG's checkout")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("record_traces", RECORDER)
    rt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rt)
    rt.install_fake_vllm()
    rt.install_transformers4_names()
    rt.build_index(args.work)
    counts = {"batches": 0, "requests": 0}
    first_call: list[float] = []
    generate = rt._LLM.generate

    def cost(requests):
        """The engine's time for one generate call: vLLM computes at most --batch-size requests at once."""
        counts["batches"] += 1
        counts["requests"] += requests
        time.sleep(math.ceil(requests / args.batch_size) * args.overhead + args.per_request * requests)

    def costed(self, prompts, sampling_params, **kw):
        first_call or first_call.append(time.perf_counter())
        cost(len(prompts))
        return generate(self, prompts, sampling_params, **kw)

    rt._LLM.generate = costed
    causal_generate = rt.FakeCausalLM.generate  # FLARE and REPLUG run on FlashRAG's HF generator

    def costed_causal(self, input_ids=None, **kw):
        first_call or first_call.append(time.perf_counter())
        cost(len(input_ids))
        return causal_generate(self, input_ids=input_ids, **kw)

    rt.FakeCausalLM.generate = costed_causal
    rt.attach_messages = lambda ev: None  # the plain form renders no chat template
    rt.run_method(
        args.method,
        args.src,
        args.work,
        os.path.join(args.work, "models", "smollm2-base"),
        {},
        questions=args.questions,
        do_eval=True,
    )
    ended = time.perf_counter()
    print(json.dumps({"seconds": ended - first_call[0], **counts}))


if __name__ == "__main__":
    main()
