"""Records FlashRAG's zero-shot, naive, Iter-RetGen, IRCoT, Self-Ask, SuRe and FLARE pipelines with a real model:
SmolLM2-135M-Instruct (the embedded model, its GGUF de-quantized by transformers into the safetensors folder
`ragbench._engines.local.embedded.embedded_safetensors_dir()` writes, copied to a folder named `smollm2-135m-instruct`
so that FlashRAG's PromptTemplate applies the chat template), FlashRAG's `HFCausalLMGenerator` on CPU, greedy (its
my_config.yaml: max_tokens 32, generator_batch_size 2), and its BM25 (bm25s backend) over
tests/data/flashrag_parity/corpus.jsonl for questions there. FlashRAG's code is unchanged (commit 1ee5249); its
config, index build and transformers-4 names come from tests/data/flashrag_parity/record_traces.py.

Run in a Python with FlashRAG's dependencies (recorded with transformers 5.24.0, torch 2.13.0+cpu, bm25s 0.2.1, one
torch thread: OMP_NUM_THREADS=1, on a busy 2-core machine many times faster than two; IRCoT's ran with
two), one process per line, each adding its methods to the file it writes:

    OMP_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONPATH=FLASHRAG_SOURCE python tests/data/flashrag_real_model/record.py \\
        --src FLASHRAG_SOURCE --model MODEL_FOLDER --work SCRATCH zero_shot naive iter_retgen --ids nq_1 hotpot_3
    ... --work SCRATCH ircot --ids nq_1 hotpot_3  (self_ask and flare likewise)
    ... --work SCRATCH sure --ids nq_1

Writes expected.json here (or `--out`; the methods already in it are kept): per method the questions (`--ids`, in
the file's order), the predictions, the searches (query) and every generate call's inputs (the chat-rendered prompt
strings), outputs and generated token ids, in FlashRAG's order. The token ids of an input are the row
`model.generate` returned after the prompt, up to and including the first EOS (the padding of a batch's finished
rows dropped); a row without EOS is kept whole, past a stop string where its batch went on. For FLARE, every
sentence its judge saw and what it decided (`judges`: `judge_sent_confidence`'s sentence and token probabilities,
its result and query). IRCoT, Self-Ask, SuRe and FLARE run with run_exp.py's settings (record_traces.METHODS);
where FlashRAG's pipeline raises (bm25s on a query that tokenises to nothing), its error and the calls and
searches made before it are recorded instead of predictions.
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
MULTI_STEP = ["ircot", "self_ask", "sure", "flare"]


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
    parser.add_argument("--out", default=os.path.join(HERE, "expected.json"))
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
        rows.clear()
        outputs = generate(input_list, *a, **kw)
        calls.append(
            {
                "inputs": list(input_list) if isinstance(input_list, list) else [input_list],
                "outputs": outputs[0] if isinstance(outputs, tuple) else outputs,  # FLARE's: (texts, scores)
                "generated_ids": rows[:],
            }
        )
        return outputs

    generator.generate = recorded_generate
    rows = []  # the generated ids of the model.generate calls made by the current generate call
    model_generate = generator.model.generate
    eos = generator.model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos])

    def recorded_model_generate(*a, **kw):
        outputs = model_generate(*a, **kw)
        for row in outputs.sequences[:, kw["input_ids"].shape[-1] :].tolist():
            ends = [i for i, token in enumerate(row) if token in eos]
            rows.append(row[: ends[0] + 1] if ends else row)
        return outputs

    generator.model.generate = recorded_model_generate
    requested = []  # the queries of the last search asked for (recorded where the search raised)
    search, batch_search = retriever.search, retriever.batch_search

    def recorded_search(query, *a, **kw):
        requested[:] = [query]
        return search(query, *a, **kw)

    def recorded_batch_search(queries, *a, **kw):
        requested[:] = queries
        return batch_search(queries, *a, **kw)

    retriever.search, retriever.batch_search = recorded_search, recorded_batch_search
    judges = []  # FLARE: what judge_sent_confidence saw and decided
    expected = {"methods": {}}
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
        judges.clear()
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
                result = run_multi_step(rt, P, args, name, retriever, generator, data, judges)
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
        if name == "flare":
            expected["methods"][name]["judges"] = judges[:]
    recorded = {"methods": {}}
    if os.path.exists(args.out):  # methods recorded before are kept (read now: runs of other methods may end first)
        with open(args.out) as handle:
            recorded = json.load(handle)
    recorded["methods"].update(expected.pop("methods"))
    recorded.update(expected)
    with open(args.out, "w") as handle:
        json.dump(recorded, handle, indent=1)
        handle.write("\n")


def run_multi_step(rt, P, args, name, retriever, generator, data, judges):
    """IRCoT, Self-Ask, SuRe or FLARE as run_exp.py builds it, on the shared retriever and generator, with the
    method's own generation settings (Self-Ask's max_tokens 100) on the generator for its run only; FLARE's
    judge_sent_confidence spied on (`judges`)."""
    config, _ = rt.make_config(args.src, args.work, args.model, dict(rt.METHODS[name][1], framework="hf"))
    shared_settings = generator.generation_params, generator.max_input_len
    generator.generation_params = config["generation_params"]
    generator.max_input_len = config["generator_max_input_len"]
    shared = {"retriever": retriever, "generator": generator}
    pipeline = {
        "ircot": lambda: P.IRCOTPipeline(config, max_iter=5, **shared),
        "self_ask": lambda: P.SelfAskPipeline(config, max_iter=5, single_hop=False, **shared),
        "sure": lambda: P.SuRePipeline(config, **shared),
        "flare": lambda: P.FLAREPipeline(config, **shared),
    }[name]()
    if name == "flare":
        judge = pipeline.judge_sent_confidence

        def recorded_judge(sent, sent_score):
            confident, query = judge(sent, sent_score)
            judges.append({"sentence": sent, "scores": sent_score, "confident": confident, "query": query})
            return confident, query

        pipeline.judge_sent_confidence = recorded_judge
    try:
        return pipeline.run(data, do_eval=False)
    finally:
        generator.generation_params, generator.max_input_len = shared_settings


if __name__ == "__main__":
    main()
