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

Writes expected.json here: per method the predictions, the searches (query) and every generate call's inputs
(the chat-rendered prompt strings) and outputs, in FlashRAG's order.
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
    parser.add_argument("methods", nargs="+", choices=["zero_shot", "naive", "iter_retgen"])
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
        data = Dataset(config, dataset_path=os.path.join(PARITY, "questions.jsonl"))
        if name == "zero_shot":
            template = PromptTemplate(config=config, system_prompt=ZERO_SHOT_SYSTEM, user_prompt="Question: {question}")
            result = P.SequentialPipeline(config, template, retriever=retriever, generator=generator).naive_run(
                data, do_eval=False
            )
        elif name == "naive":
            result = P.SequentialPipeline(config, retriever=retriever, generator=generator).run(data, do_eval=False)
        else:
            result = P.IterativePipeline(config, iter_num=3, retriever=retriever, generator=generator).run(
                data, do_eval=False
            )
        expected["methods"][name] = {
            "predictions": {item.id: item.output.get("pred") for item in result},
            "searches": [event["query"] for event in rt.EVENTS if event["type"] == "retrieve"],
            "calls": calls[:],
        }
    with open(path, "w") as handle:
        json.dump(expected, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
