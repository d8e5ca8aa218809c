"""Records BrowseComp-Plus's own clients (search_agent/openai_client.py and oss_client.py at commit 97c637c, run
unchanged) against the fake server of tests/support/search_agent_fake.py: the requests they send, in the form common to
both APIs, and the run files they write. The parity test (tests/systems/search_agent/test_search_agent_parity.py) runs ragbench's
`search_agent` against the same fake and compares.

Their BM25 searcher needs pyserini and Java, and their `searcher.searchers` package imports it (and faiss,
torch, tevatron) on import: here that package is replaced by one searcher, `ragbench`, a subclass of their
`BaseSearcher` (its tool descriptions) that answers each query with the hits ragbench's BM25 gave the same
query over fictional_multihop's corpus (`hits.json`, from the ragbench side's run) and get_document from
that corpus. The clients' own code (the loop, the tools, the prompts, the run file) is theirs, unchanged.

    python -m venv /tmp/bcp && /tmp/bcp/bin/pip install openai==1.97.0 rich tqdm transformers python-dotenv
    /tmp/bcp/bin/python tests/data/search_agent/record_upstream.py BROWSECOMP_PLUS_CHECKOUT
"""

from __future__ import annotations

import argparse
import enum
import importlib.util
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
CORPUS = TESTS.parent / "tasks" / "fictional_multihop" / "data" / "corpus.jsonl"
RUNS = {  # fixture name -> (client module, its arguments besides --query, --output-dir, --searcher-type)
    "openai_client": (
        "openai_client",
        ["--model", "agent", "--get-document", "--query-template", "QUERY_TEMPLATE", "--top_p", "1"]
        + ["--snippet-max-tokens", "12", "--k", "5", "--max_tokens", "10000"],
    ),
    "openai_client_o3": (  # a model whose name starts with "o": no temperature or top_p sent, though given
        "openai_client",
        ["--model", "o3", "--get-document", "--query-template", "QUERY_TEMPLATE", "--temperature", "0.5"]
        + ["--top_p", "0.9", "--snippet-max-tokens", "12", "--k", "5", "--max_tokens", "10000"],
    ),
    "oss_client": ("oss_client", ["--model", "agent", "--snippet-max-tokens", "0", "--k", "5"]),
}


def build_tokenizer() -> Path:
    """The tokenizer snippets are cut in: a byte-level BPE of 400 tokens (every byte one of them) trained on fictional_multihop's corpus
    (Qwen3-0.6B's, which the clients load, cannot be downloaded here), saved beside the fixtures; the clients
    load it as "Qwen/Qwen3-0.6B" from a Hugging Face cache made for them, ragbench from its folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(texts, trainer)
    folder = HERE / "tokenizer"
    PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>").save_pretrained(folder)
    return folder


def hub_cache(tokenizer: Path, home: Path, repo: str = "Qwen/Qwen3-0.6B") -> None:
    """A Hugging Face home whose hub cache holds `tokenizer` as `repo` (one snapshot, refs/main)."""
    revision = "0" * 40
    snapshot = home / "hub" / ("models--" + repo.replace("/", "--")) / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    for path in tokenizer.iterdir():
        (snapshot / path.name).write_bytes(path.read_bytes())
    (snapshot / "config.json").write_text('{"model_type": "qwen3"}')  # AutoTokenizer reads the model's config first
    (snapshot.parents[1] / "refs").mkdir(exist_ok=True)
    (snapshot.parents[1] / "refs" / "main").write_text(revision)


def searcher_package(checkout: Path) -> types.ModuleType:
    """`searcher.searchers` with their BaseSearcher and a SearcherType of one searcher fed ragbench's hits."""
    spec = importlib.util.spec_from_file_location("searcher.searchers.base", checkout / "searcher/searchers/base.py")
    assert spec is not None and spec.loader is not None
    base = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(base)
    documents = {}
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        documents[record["id"]] = f"{record['title']}\n{record['text']}" if record.get("title") else record["text"]

    class RagbenchHits(base.BaseSearcher):  # type: ignore[name-defined,misc]
        @classmethod
        def parse_args(cls, parser: argparse.ArgumentParser) -> None:
            parser.add_argument("--hits", required=True)

        def __init__(self, args: argparse.Namespace) -> None:
            self.hits = json.loads(Path(args.hits).read_text(encoding="utf-8"))

        def search(self, query: str, k: int = 10) -> list[dict[str, Any]]:
            return [
                {"docid": hit["docid"], "score": hit["score"], "text": documents[hit["docid"]]}
                for hit in self.hits[query][:k]
            ]

        def get_document(self, docid: str) -> dict[str, Any] | None:
            return {"docid": docid, "text": documents[docid]} if docid in documents else None

        @property
        def search_type(self) -> str:
            return "BM25"

    class SearcherType(enum.Enum):
        RAGBENCH = ("ragbench", RagbenchHits)

        def __init__(self, cli_name: str, searcher_class: type) -> None:
            self.cli_name, self.searcher_class = cli_name, searcher_class

        @classmethod
        def get_choices(cls) -> list[str]:
            return [member.cli_name for member in cls]

        @classmethod
        def get_searcher_class(cls, cli_name: str) -> type:
            return next(member.searcher_class for member in cls if member.cli_name == cli_name)

    package = types.ModuleType("searcher.searchers")
    package.base = base  # type: ignore[attr-defined]
    package.BaseSearcher = base.BaseSearcher  # type: ignore[attr-defined]
    package.SearcherType = SearcherType  # type: ignore[attr-defined]
    return package


def record(checkout: Path, name: str, work: Path) -> dict[str, Any]:
    """Run one client over questions.jsonl; its requests and run files, by query id."""
    sys.path.insert(0, str(TESTS))
    from support.search_agent_fake import FakeAgentServer

    module, arguments = RUNS[name]
    queries = work / "queries.tsv"
    questions = [json.loads(line) for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    queries.write_text("".join(f"{q['id']}\t{q['question']}\n" for q in questions), encoding="utf-8")
    out = work / name
    server = FakeAgentServer()
    os.environ.update(OPENAI_API_KEY="EMPTY", OPENAI_BASE_URL=server.base_url)
    sys.argv = [module, "--query", str(queries), "--output-dir", str(out), "--searcher-type", "ragbench"]
    sys.argv += ["--hits", str(HERE / "hits.json"), *arguments]
    if module == "oss_client":
        sys.argv += ["--model-url", server.base_url]
    try:
        runpy_main(checkout, module)
    finally:
        server.stop()
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(out.glob("run_*.json"))]
    by_question = {q["question"]: q["id"] for q in questions}
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for request, body in zip(server.requests, server.bodies):  # one query at a time: arrival order is its order
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        qid = next(qid for question, qid in by_question.items() if f"Question: {question}\n" in first)
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    return {
        "requests": requests,
        "bodies": bodies,
        "runs": {
            run["query_id"]: {key: run[key] for key in ("tool_call_counts", "status", "result")}
            | {
                "retrieved_docids": sorted(run["retrieved_docids"]),
                "output_tokens": run.get("usage", {}).get("output_tokens"),
            }
            for run in runs
        },
    }


def runpy_main(checkout: Path, module: str) -> None:
    """Import the client from its folder (it imports `prompts` and `utils` from there) and call its main()."""
    sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
    sys.modules["searcher"] = types.ModuleType("searcher")
    sys.modules["searcher.searchers"] = searcher_package(checkout)
    client = importlib.import_module(module)
    client.main()


def main() -> None:
    import importlib.metadata as metadata

    checkout = Path(sys.argv[1]).resolve()
    work = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/bcp_record").resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.update(HF_HOME=str(work / "hf"), HF_HUB_OFFLINE="1")  # before transformers reads them on import
    hub_cache(build_tokenizer(), work / "hf")
    versions = {name: metadata.version(name) for name in ("openai", "transformers", "rich", "tqdm")}
    for name in RUNS:
        fixture = {
            "upstream": "texttron/BrowseComp-Plus@97c637c search_agent/" + RUNS[name][0] + ".py, unchanged",
            "python": sys.version.split()[0],
            "versions": versions,
            "argv": RUNS[name][1],
            **record(checkout, name, work),
        }
        (HERE / f"{name}.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        for module in ("prompts", "utils", RUNS[name][0]):
            sys.modules.pop(module, None)


if __name__ == "__main__":
    main()
