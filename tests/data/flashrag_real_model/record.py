"""Records FlashRAG's zero-shot, naive and Iter-RetGen pipelines with a real model: SmolLM2-135M-Instruct (the
embedded model, its GGUF de-quantized by transformers into the safetensors folder `ragbench._engines.embedded.
embedded_safetensors_dir()` writes, copied to a folder named `smollm2-135m-instruct` so that FlashRAG's
PromptTemplate applies the chat template), FlashRAG's `HFCausalLMGenerator` on CPU, greedy (its my_config.yaml:
max_tokens 32, generator_batch_size 2), and its BM25 (bm25s backend) over tests/data/flashrag_parity/corpus.jsonl
for the six questions there. FlashRAG's code is unchanged (commit 1ee5249); its config, index build and
transformers-4 names come from tests/data/flashrag_parity/record_traces.py.

Run in a Python with FlashRAG's dependencies (recorded with transformers 5.24.0, torch 2.13.0+cpu, bm25s 0.2.1):

    PYTHONHASHSEED=0 PYTHONPATH=FLASHRAG_SOURCE python tests/data/flashrag_real_model/record.py \\
        --src FLASHRAG_SOURCE --model MODEL_FOLDER --work SCRATCH zero_shot naive iter_retgen
    ... --work SCRATCH ircot --ids nq_1 hotpot_3  (and self_ask likewise)

Writes expected.json here: per method the predictions, the searches (query) and every generate call's inputs
(the chat-rendered prompt strings) and outputs, in FlashRAG's order. IRCoT and Self-Ask run with
run_exp.py's settings (record_traces.METHODS) on the questions `--ids` names (recorded as `questions`); where
FlashRAG's pipeline raises (bm25s on a query that tokenises to nothing), its error and the calls and searches
made before it are recorded instead of predictions.
"""

import argparse
import importlib.util
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY = os.path.join(HERE, "..", "flashrag_parity")
ZERO_SHOT_SYSTEM = (
    "Answer the question based on your own knowledge. Only give me the answer and do not output any other words."
)


# the multi-step methods recorded: their pipelines with run_exp.py's settings (record_traces.METHODS)
MULTI_STEP = ["ircot", "self_ask"]


def load_recorder():
    spec = importlib.util.spec_from_file_location("record_traces", os.path.join(PARITY, "record_traces.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--ids", nargs="*", help="record these questions only (the multi-step methods: fewer calls)")
    parser.add_argument("methods", nargs="+", choices=["zero_shot", "naive", "iter_retgen", *MULTI_STEP])
    args = parser.parse_args()
    rt = load_recorder()
    rt.install_transformers4_names()
    import bm25s
    import torch
    import transformers

    os.makedirs(args.work, exist_ok=True)
    rt.build_index(args.work)
    import flashrag.pipeline as P
    from flashrag.dataset import Dataset
    from flashrag.prompt import PromptTemplate
    from flashrag.utils import get_generator, get_retriever

    config, _ = rt.make_config(args.src, args.work, args.model, {"framework": "hf"})
    retriever = get_retriever(config)
    rt.spy_retriever(retriever)
    generator = get_generator(config)
    calls = []
    generate = generator.generate

    def recorded_generate(input_list, *a, **kw):
        outputs = generate(input_list, *a, **kw)
        calls.append({"inputs": list(input_list) if isinstance(input_list, list) else [input_list], "outputs": outputs})
        return outputs

    generator.generate = recorded_generate
    requested = []  # the queries of the last search asked for (recorded where the search raised)
    search, batch_search = retriever.search, retriever.batch_search

    def recorded_search(query, *a, **kw):
        requested[:] = [query]
        return search(query, *a, **kw)

    def recorded_batch_search(queries, *a, **kw):
        requested[:] = queries
        return batch_search(queries, *a, **kw)

    retriever.search, retriever.batch_search = recorded_search, recorded_batch_search
    path = os.path.join(HERE, "expected.json")
    expected = {"methods": {}}
    if os.path.exists(path):  # methods recorded before are kept
        with open(path) as handle:
            expected = json.load(handle)
    expected.update(
        {
            "flashrag_commit": "1ee5249",
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "bm25s": bm25s.__version__,
        }
    )
    for name in args.methods:
        rt.EVENTS.clear()
        calls.clear()
        questions = os.path.join(PARITY, "questions.jsonl")
        if args.ids:  # a subset, in the file's order
            questions = os.path.join(args.work, f"questions_{name}.jsonl")
            with open(os.path.join(PARITY, "questions.jsonl")) as source, open(questions, "w") as subset:
                subset.writelines(line for line in source if json.loads(line)["id"] in args.ids)
        data = Dataset(config, dataset_path=questions)
        if name == "zero_shot":
            template = PromptTemplate(config=config, system_prompt=ZERO_SHOT_SYSTEM, user_prompt="Question: {question}")
            result = P.SequentialPipeline(config, template, retriever=retriever, generator=generator).naive_run(
                data, do_eval=False
            )
        elif name == "naive":
            result = P.SequentialPipeline(config, retriever=retriever, generator=generator).run(data, do_eval=False)
        elif name == "iter_retgen":
            result = P.IterativePipeline(config, iter_num=3, retriever=retriever, generator=generator).run(
                data, do_eval=False
            )
        else:
            try:
                result = run_multi_step(rt, P, args, name, retriever, generator, data)
            except ValueError as error:  # bm25s on a query that tokenises to nothing (FlashRAG's crash): recorded
                expected["methods"][name] = {
                    "questions": [item.id for item in data],
                    "error": f"{type(error).__name__}: {error}",
                    "searches": [event["query"] for event in rt.EVENTS if event["type"] == "retrieve"],
                    "calls": calls[:],
                    "failed_searches": requested[:],
                }
                continue
        expected["methods"][name] = {
            "questions": [item.id for item in result],
            "predictions": {item.id: item.output.get("pred") for item in result},
            "searches": [event["query"] for event in rt.EVENTS if event["type"] == "retrieve"],
            "calls": calls[:],
        }
    with open(path, "w") as handle:
        json.dump(expected, handle, indent=1)
        handle.write("\n")


def run_multi_step(rt, P, args, name, retriever, generator, data):
    """IRCoT or Self-Ask as run_exp.py builds it, on the shared retriever and generator, with the method's own
    generation settings (Self-Ask's max_tokens 100) on the generator for its run only."""
    config, _ = rt.make_config(args.src, args.work, args.model, dict(rt.METHODS[name][1], framework="hf"))
    shared_settings = generator.generation_params, generator.max_input_len
    generator.generation_params = config["generation_params"]
    generator.max_input_len = config["generator_max_input_len"]
    shared = {"retriever": retriever, "generator": generator}
    pipeline = {
        "ircot": lambda: P.IRCOTPipeline(config, max_iter=5, **shared),
        "self_ask": lambda: P.SelfAskPipeline(config, max_iter=5, single_hop=False, **shared),
    }[name]()
    try:
        return pipeline.run(data, do_eval=False)
    finally:
        generator.generation_params, generator.max_input_len = shared_settings


if __name__ == "__main__":
    main()
