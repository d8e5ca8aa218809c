"""Small data in each built-in task's upstream format, and one scripted model for every system, so that
the system x task matrix can run offline (tests/run/test_matrix.py, benchmarks/matrix.py).

A task added to ragbench gets one line in TASK_DATA: a builder writing its data under a folder and
returning (--data path, --task-arg options). Everything here is written for ragbench, not copied.
"""

from __future__ import annotations

import functools
import json
import math
import re
import tarfile
import tempfile
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import ragbench.tasks.flashrag
import ragbench.tasks.selfrag
from conftest import SESSION_HOME, TEST_DATA, plugins_read_once, write_jsonl
from ragbench._types import Example
from ragbench._yaml_tasks.spec import load_spec
from support import matrix_apps
from support.crag_helpers import crag_record, tokenizer_dir
from support.crag_tiny_kg import write_tiny_kg

ALCE = TEST_DATA / "alce"
OPEN_QA = TEST_DATA / "open_qa"
FLASHRAG = TEST_DATA / "flashrag"  # two records per set of tasks/flashrag, named as the task's data.file
KILT = TEST_DATA / "kilt"
MULTIHOP_RAG = TEST_DATA / "multihop_rag"
MIRAGE = TEST_DATA / "mirage"
FRESHQA = TEST_DATA / "freshqa" / "FreshQA_sample.csv"
TREC_RAG = TEST_DATA / "trec_rag"  # topics, qrels and two gzip shards of the MS MARCO V2.1 segmented corpus
VIDORE_V1 = TEST_DATA / "vidore" / "v1"  # a ViDoRe V1 QA table of seven rows: six pages, five queries
BEIR = TEST_DATA / "beir"  # a BEIR dataset folder of five documents, three queries, two of them in the test qrels
FRAMES = TEST_DATA / "frames" / "test.tsv"  # FRAMES's test.tsv layout, three questions over the Varn corpus
BROWSECOMP_PLUS = TEST_DATA / "browsecomp_plus" / "sample"  # a checkout's layout: 3 queries, both qrels, 8 documents
DRAGUN = TEST_DATA / "dragun"  # the resources repository's data/ layout (2 topics) and a shard of 6 segments

# DeepResearch Bench's RACE judge (metric drb_race): the cleaner returns the wrong report as it is (it cites
# nothing) and any other report as RACE_CLEANED (a report without citations, over RACE's 100 characters: judged);
# the scorer gives the wrong report (article 1) 0 on every criterion against the reference's 8 and any other report
# the reference's 8, naming the criteria of the tasks of `deep_research_bench` (below).
WRONG = "zzz"
WRONG_REPORT = " ".join([WRONG] * 40)  # a report as long as a short real one, sharing no word with the reference
RACE_CLEANED = (
    "Olm is the fishing town on the north coast of Varn that the brewer Ansgar Pell founded in 1788 and that "
    "a ferry has joined to Kiribati Sound since 1902."
)
RACE_CRITERIA = {
    "comprehensiveness": ["Covers the founding", "Covers later growth"],
    "insight": ["Explains causes"],
    "instruction_following": ["Answers the task"],
    "readability": ["Clear structure", "Plain wording"],
}


def race_reply(first: float, second: float) -> str:
    """The judge's RACE reply, as Gemini writes it (a JSON fence): every criterion scored first, second."""
    judged = {
        dim: [
            {"criterion": name, "analysis": "Compared.", "article_1_score": first, "article_2_score": second}
            for name in names
        ]
        for dim, names in RACE_CRITERIA.items()
    }
    return f"```json\n{json.dumps(judged, indent=2)}\n```"


def dragun_rules() -> list[dict[str, str]]:
    """DRAGUN's AutoJudge: for questions (metric dragun_question_autojudge), no question is compound and the wrong
    question ("zzz...") is very-different from every rubric question, any other very-similar; for reports (metric
    dragun_autojudge), the wrong report (the user turn's last JSON string) supports no rubric answer (an empty list
    of assessments), any other report every answer of its topic's rubric."""
    decided = lambda label: json.dumps({"rationale": "Compared.", "assessment_decision": label})  # noqa: E731
    rules = [
        {
            "pattern": r"^Question: .*\nCheck if this question is a compound question\. Reason first and then decide\.$",
            "response": decided("not-compound"),
        },
        {"pattern": rf'\n\n\{{\n  "candidate_question": "{WRONG}', "response": decided("very-different")},
        {"pattern": r"\nThis is the target question: ", "response": decided("very-similar")},
        {"pattern": rf'in the rubric\.\n\n"{WRONG}', "response": json.dumps({"assessments": []})},
    ]
    for path in sorted((DRAGUN / "data" / "human_rubrics").glob("*.json")):
        rubric = json.loads(path.read_text(encoding="utf-8"))
        judged = [
            {"answer_id": answer["answer_id"], "rationale": "Covered.", "assessment_decision": "supports"}
            for question in rubric["rubrics"]
            for answer in question["short_answers"]
        ]
        rules.append({"pattern": f'"docid": "{rubric["topic_id"]}"', "response": json.dumps({"assessments": judged})})
    return rules


RACE_CLEANING = r"(请帮我清洗以下研究文章|Please help me clean the following research article)"
RACE_RULES = [
    {"pattern": rf'{RACE_CLEANING}.*(文章内容：|Article content:)\n"{WRONG}', "response": WRONG_REPORT},
    {"pattern": RACE_CLEANING, "response": RACE_CLEANED},
    {"pattern": rf'<article_1>\n"{WRONG}.*<criteria_list>', "response": race_reply(0, 8)},
    {"pattern": r"<article_1>\n.*<criteria_list>", "response": race_reply(8, 8)},
]

# Auto-ARGUE's judge (metric auto_argue): no sentence is a negative assertion, every uncited sentence needs a
# citation, no cited document attests its sentence and no sentence gives a nugget's answer.
ARGUE_RULES = [
    {"pattern": r"has no evidence for it\? Answer YES or NO\.$", "response": "NO"},
    {"pattern": r"needs a citation to a source\? Answer YES or NO\.$", "response": "YES"},
    {"pattern": r"^(Document|Question): .*Answer YES or NO\.$", "response": "NO"},
]

# Rules answered before the per-question answers (first match wins on the request's last message): the
# NLI judge entails unless the premise is the wrong answer, the CRAG judge finds a non-exact answer
# wrong, FreshEval's judge credits any response but the wrong answer, CRAG's KG entity extraction,
# LLatrieval's selection and verification, DeepResearch Bench's RACE judge.
STEP_RULES = [
    # RAGChecker's claim extraction (a wrong answer holds no claim) and joint checking (nothing is in a wrong
    # answer, everything else is entailed)
    {"pattern": rf"### Candidate Answer:\n{WRONG}", "response": "Abstain"},
    {"pattern": r"### Candidate Answer:\n", "response": '("the answer", "is", "given")'},
    {"pattern": rf"### Reference:\n{WRONG}.*only a list of labels", "response": "Neutral"},
    {"pattern": r"only a list of labels", "response": "Entailment"},
    {"pattern": rf"^premise: {WRONG}", "response": "0"},
    {"pattern": r"^premise: ", "response": "1"},
    {"pattern": r"Ground truth: ", "response": '{"accuracy": false}'},
    {"pattern": r"\nGround Truth: .*\nPrediction: ", "response": "Result: WRONG"},  # CRAG-MM's judge
    {"pattern": rf"\nresponse: [^\n]*{WRONG}[^\n]*\ncomment: $", "response": "Thus, the response is not credited."},
    {"pattern": r"\nresponse: [^\n]*\ncomment: $", "response": "Thus, the response is credited.\nevaluation: correct"},
    {"pattern": r"^Query: [^\n]*\nQuery Time: [^\n]*\n?$", "response": '{"domain": "other", "main_entity": "florida"}'},
    {"pattern": r"\nk: \d+", "response": "Selected Documents: 1, 2"},
    # FRAMES's auto-rater (the llm_judge preset frames): any answer but the wrong one holds the ground truth
    {
        "pattern": rf"\n- Predicted Answer: {WRONG}\n- Ground Truth Answer: ",
        "response": "Explanation: no.\nDecision: FALSE",
    },
    {"pattern": r"\n- Predicted Answer: .*\n- Ground Truth Answer: ", "response": "Explanation: yes.\nDecision: TRUE"},
    # BrowseComp-Plus's grader (evaluate_run.py's template): any response but the wrong answer is correct
    {"pattern": rf"\n\[response\]: {WRONG}\n\n\[correct_answer\]: ", "response": "correct: no\nconfidence: 80"},
    {"pattern": r"\n\[response\]: .*\n\n\[correct_answer\]: ", "response": "correct: yes\nconfidence: 80"},
    {"pattern": r"^Question:.*\n\nDocuments:", "response": "[YES]"},
    *RACE_RULES,
    *dragun_rules(),
    *ARGUE_RULES,
]


def popqa(folder: Path) -> tuple[str, dict[str, Any]]:
    rows = [
        {
            "id": i,
            "question": f"Who is person {i}?",
            "answers": [f"person {i}"],
            "prop": "occupation",
            "s_wiki_title": f"P{i}",
            "pop": 10,
            "ctxs": [{"id": f"{i}0", "title": f"P{i}", "text": f"Person {i} is a painter.", "score": "1.5"}],
        }
        for i in range(2)
    ]
    return str(write_jsonl(folder / "popqa.jsonl", rows)), {}


def pubhealth(folder: Path) -> tuple[str, dict[str, Any]]:
    return str(TEST_DATA / "selfrag" / "health_claims_processed.sample.jsonl"), {}


def arc(folder: Path) -> tuple[str, dict[str, Any]]:
    rows = [
        {
            "id": f"arc{i}",
            "question": f"Which gas do plants take in ({i})?",
            "answerKey": "B",
            "choices": {"text": ["oxygen", "carbon dioxide", "helium", "neon"], "label": ["A", "B", "C", "D"]},
            "ctxs": [{"id": "c1", "title": "Photosynthesis", "text": "Plants take in carbon dioxide.", "score": "2"}],
        }
        for i in range(2)
    ]
    return str(write_jsonl(folder / "arc.jsonl", rows)), {}


def alce(name: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    return lambda folder: (str(ALCE / name), {})


def crag_mm(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    """CRAG-MM in the hub's layout with generated images: two single-turn questions, or one conversation of two
    turns; written once a process (`crag_mm_dataset`: a run only reads it), not once a cell."""

    def build(folder: Path) -> tuple[str, dict[str, Any]]:
        from support.crag_mm_helpers import tokenizer_dir as llama32_dir

        return str(crag_mm_dataset(task)), {"tokenizer": llama32_dir()}

    return build


@functools.cache
def crag_mm_dataset(task: str) -> Path:
    """The CRAG-MM cells' data folder of `task` (`crag_mm`), under the session's home folder (removed with it)."""
    from ragbench.tasks.crag_mm.synthetic import write_dataset
    from support.crag_mm_helpers import case_rows, loader_cases

    cases = loader_cases()
    rows = [cases["single"][0], {**cases["single"][0], "session_id": "s-ego-2"}] if task == "crag_mm_single" else []
    if rows:
        rows[1] = {
            **rows[1],
            "turns": [{**rows[1]["turns"][0], "interaction_id": "a9", "query": "what colour?"}],
            "answers": [{"interaction_id": "a9", "ans_full": "Red."}],
        }
    else:
        first = cases["multi"][0]
        rows = [{**first, "turns": first["turns"][:2], "answers": first["answers"][:2]}]
    folder = Path(tempfile.mkdtemp(prefix="matrix-crag-mm-", dir=SESSION_HOME)) / task
    return write_dataset(folder, case_rows(rows))


_TINY_KG: list[Path] = []


def tiny_kg() -> Path:
    """The tiny CRAG KG the CRAG cells read (a run only reads a KG: tasks/crag/kg), written once a process under the
    session's home folder (removed with it), not once a cell."""
    if not _TINY_KG:
        _TINY_KG.append(write_tiny_kg(Path(tempfile.mkdtemp(prefix="matrix-crag-kg-", dir=SESSION_HOME)) / "cragkg"))
    return _TINY_KG[0]


def crag(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    def build(folder: Path) -> tuple[str, dict[str, Any]]:
        records = [crag_record(i, split=1) for i in range(2)]
        args = {
            "tokenizer": tokenizer_dir(),
            "embedder": "support.crag_helpers:KeywordEmbedder",
            "page_executor": "thread",
            "split": "all",
        }
        if task != "crag_t1":
            args["kg_dir"] = str(tiny_kg())
        if task != "crag_t3":
            return str(write_jsonl(folder / f"{task}.jsonl", records)), args
        buffer = BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
            blob = "".join(json.dumps(r) + "\n" for r in records).encode()
            info = tarfile.TarInfo("crag_task_3_dev_v5/part_0.jsonl")
            info.size = len(blob)
            archive.addfile(info, BytesIO(blob))
        path = folder / "crag_task_3_dev_v5.tar.bz2.part0"
        path.write_bytes(buffer.getvalue())
        return str(path), args

    return build


def squad(folder: Path) -> tuple[str, dict[str, Any]]:
    """dev-v1.1.json layout; the paragraph shown as the document (passages=context)."""
    qas = [
        {
            "id": f"sq{i}",
            "question": f"Where does person {i} live?",
            "answers": [{"answer_start": 0, "text": "Paris"}, {"answer_start": 0, "text": "Paris"}],
        }
        for i in range(2)
    ]
    data = {
        "version": "1.1",
        "data": [
            {"title": "Person_lives", "paragraphs": [{"context": "Person 0 and person 1 live in Paris.", "qas": qas}]}
        ],
    }
    path = folder / "dev-v1.1.json"
    path.write_text(json.dumps(data))
    return str(path), {"passages": "context"}


def ragchecker(folder: Path) -> tuple[str, dict[str, Any]]:
    """A domain's queries in RAGChecker's data_process.sh layout, two Varn questions (open domain: the Varn corpus)."""
    rows = [
        {"query_id": "0", "query": "what is the capital of varn", "gt_answer": "Evermouth is the capital of Varn."},
        {"query_id": "1", "query": "who founded the fishing town of olm", "gt_answer": "Ansgar Pell founded Olm."},
    ]
    path = folder / "ragchecker_queries.json"
    path.write_text(json.dumps({"input_data": rows}), encoding="utf-8")
    return str(path), {}


def open_qa(sample: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    """A set of tasks/open_qa: its sample in tests/data/open_qa (the release's or FlashRAG's format)."""
    return lambda folder: (str(OPEN_QA / sample), {})


def flashrag(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    """A set of tasks/flashrag: its two records in FlashRAG's JSONL, the file the task downloads."""
    spec = load_spec(FLASHRAG_TASK_FILES[task])
    return lambda folder: (str(FLASHRAG / spec.data.file), {})


FLASHRAG_TASK_FILES = {path.stem: path for path in Path(ragbench.tasks.flashrag.__file__).parent.glob("*.yaml")}


# Two records in KILT's format on the pages of the KILT corpus sample (tests/data/kilt/kilt_passages.jsonl:
# 90001 Olm, 90002 Varn, 90003 Kiribati Sound ferry, 90009 Trask), each with one output: its answer and the
# page it comes from. FEVER's are claims and labels; every other KILT set gets the two Varn questions.
KILT_RECORDS = {
    "kilt_fever": [
        ("Olm was founded by Ansgar Pell.", "SUPPORTS", "90001", "Olm"),
        ("Varn has no capital.", "REFUTES", "90002", "Varn"),
    ],
    "other": [
        ("who founded the fishing town of olm", "Ansgar Pell", "90001", "Olm"),
        ("what is the capital of varn", "Evermouth", "90002", "Varn"),
    ],
}


def kilt(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    def build(folder: Path) -> tuple[str, dict[str, Any]]:
        rows = [
            {
                "id": f"{task}-{i}",
                "input": text,
                "meta": {},
                "output": [
                    {
                        "answer": answer,
                        "provenance": [
                            {"wikipedia_id": page, "title": title, "start_paragraph_id": 1, "end_paragraph_id": 1}
                        ],
                    }
                ],
            }
            for i, (text, answer, page, title) in enumerate(KILT_RECORDS.get(task, KILT_RECORDS["other"]))
        ]
        return str(write_jsonl(folder / f"{task}-dev-kilt.jsonl", rows)), {}

    return build


def multihop_rag(folder: Path) -> tuple[str, dict[str, Any]]:
    """Two queries in MultiHopRAG.json's format, each with two evidence facts from two articles of the
    corpus sample (tests/data/multihop_rag/corpus.json: 0 Harbor Lights festival, 1 Kiribati Sound ferry,
    2 Olm fishing fleet), worded so that bm25 scores the third article 0 for each."""
    articles = json.loads((MULTIHOP_RAG / "corpus.json").read_text(encoding="utf-8"))

    def evidence(n: int, fact: str) -> dict[str, str]:
        return {
            **{key: articles[n][key] for key in ("title", "author", "url", "source", "category", "published_at")},
            "fact": fact,
        }

    rows = [
        {
            "query": "Who founded the festival that drew a record crowd to Evermouth, after which the ferry line "
            "added crossings?",
            "answer": "Ansgar Pell",
            "question_type": "inference_query",
            "evidence_list": [
                evidence(
                    0,
                    "The festival, founded by the lantern maker Ansgar Pell in 1998, filled "
                    "the old quay with floating lanterns for three nights.",
                ),
                evidence(1, "The operator, Sound Lines, said demand rose after the Harbor Lights festival."),
            ],
        },
        {
            "query": "Do Coastal Ledger's new crossings cost more than daytime fares, and has Olm's fishing fleet grown?",
            "answer": "No",
            "question_type": "comparison_query",
            "evidence_list": [
                evidence(1, "Tickets for the night crossings will cost 12 crowns, the same as daytime fares."),
                evidence(2, "The fleet has 64 boats, down from 80 five years ago."),
            ],
        },
    ]
    path = folder / "MultiHopRAG.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return str(path), {}


# Two records per RGB set in its format (one JSON per line), each with one positive passage (group) per answer
# item and one negative; noise_rate 0 (the default) shows the positives. The Chinese sets' answers have no
# spaces: evalue.py takes them out of the output before looking for the answer.
RGB_RECORDS = {
    "en": [("What is the capital of Varn?", [["Evermouth", "Evermouth town"]]), ("Who founded Olm?", ["Ansgar Pell"])],
    "zh": [("瓦恩岛的首都是哪里？", [["埃弗茅斯", "埃弗茅斯镇"]]), ("奥尔姆的创始人是谁？", ["佩尔"])],
}


def rgb(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    def build(folder: Path) -> tuple[str, dict[str, Any]]:
        rows = []
        for i, (query, answer) in enumerate(RGB_RECORDS[task.split("_")[1]]):
            items = [item if isinstance(item, str) else item[0] for item in answer]
            row: dict[str, Any] = {
                "id": i,
                "query": query,
                "answer": answer,
                "positive": [f"{query} {item}." for item in items],
                "negative": ["Trask is a village."],
            }
            if task.endswith("_int"):
                row["positive"] = [[passage] for passage in row["positive"]]
            if task.endswith("_fact"):
                row.update(fakeanswer="Trask", positive_wrong=[f"{query} Trask." for _ in items])
            rows.append(row)
        return str(write_jsonl(folder / f"{task}.json", rows)), {}

    return build


def mirage(folder: Path) -> tuple[str, dict[str, Any]]:
    """MIRAGE's benchmark.json (tests/data/mirage/benchmark.json): two records per set, in its format; each task
    reads its own set. The second record's answer is never A, the choice evaluate.py's locate_answer gives an
    output naming none."""
    return str(MIRAGE / "benchmark.json"), {}


def freshqa(folder: Path) -> tuple[str, dict[str, Any]]:
    """The sample's two title rows, its header and its first two rows (both of the test split, the default):
    "Who founded the fishing town of Olm?" (Ansgar Pell, in the Varn corpus) and a false premise."""
    lines = FRESHQA.read_text(encoding="utf-8").splitlines(keepends=True)
    path = folder / "FreshQA.csv"
    path.write_text("".join(lines[:5]), encoding="utf-8")
    return str(path), {}


# Two research tasks of DeepResearch Bench's layout asking of Varn (the Varn corpus answers them), each with the
# RACE criteria the scripted judge names (RACE_CRITERIA, weights of the task's) and a reference report, whose first
# sentence (all that IRCoT and FLARE keep of it) is over RACE's 100 characters and which has no comma (SuRe drops them).
DRB_TASKS = [
    (
        "Write a short report on the history of Olm, the fishing town on the north coast of Varn.",
        "Olm is the fishing town on the north coast of Varn that the brewer Ansgar Pell founded in 1788 and that "
        "a ferry has joined to Kiribati Sound since 1902. Its fleet still lands most of the island's fish.",
    ),
    (
        "Survey how Evermouth became the capital of the island of Varn.",
        "Evermouth was founded in 1602 as the port city on the south coast of Varn and became the capital of the "
        "island as the seat of its trade. No other town of the forty-one lakes rivals its harbour.",
    ),
]


def deep_research_bench(folder: Path) -> tuple[str, dict[str, Any]]:
    """The repository's data/ folder: the tasks, their criteria and their reference reports."""
    data = folder / "drb_data"
    weights = {"comprehensiveness": 0.4, "insight": 0.3, "instruction_following": 0.2, "readability": 0.1}
    criteria = {
        dim: [
            {"criterion": name, "explanation": f"Does the report meet: {name.lower()}?", "weight": 1 / len(names)}
            for name in names
        ]
        for dim, names in RACE_CRITERIA.items()
    }
    tasks = [
        {"id": i + 1, "topic": "History", "language": "en", "prompt": prompt} for i, (prompt, _) in enumerate(DRB_TASKS)
    ]
    for path, rows in (
        ("prompt_data/query.jsonl", tasks),
        (
            "criteria_data/criteria.jsonl",
            [{"prompt": t["prompt"], "dimension_weight": weights, "criterions": criteria} for t in tasks],
        ),
        ("test_data/cleaned_data/reference.jsonl", [{"prompt": p, "article": a} for p, a in DRB_TASKS]),
    ):
        (data / path).parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(data / path, rows)
    return str(data), {}


def argue_report(folder: Path) -> tuple[str, dict[str, Any]]:
    """An ARGUE folder: two report requests asking of Varn, each with a nugget bank whose answers are attested by
    documents no corpus holds (so no citation is relevant)."""
    data = folder / "argue_data"
    requests = [
        {
            "request_id": f"v{i}",
            "title": title,
            "background": "I write a guide to Varn.",
            "problem_statement": text,
            "limit": 2000,
        }
        for i, (title, text) in enumerate(
            (("Olm", "Write a report on how Olm was founded."), ("Evermouth", "Write a report on Evermouth's rise.")),
            start=1,
        )
    ]
    (data / "nuggets").mkdir(parents=True, exist_ok=True)
    write_jsonl(data / "requests.jsonl", requests)
    for request in requests:
        answer = {"answer": "1788", "references": [{"doc_id": "elsewhere"}]}
        question = {"question": "When?", "answers": {"1788": answer}, "aggregator_type": "OR"}
        bank = {"query_id": request["request_id"], "nugget_bank": {"When?": question}}
        (data / "nuggets" / f"{request['request_id']}.json").write_text(json.dumps(bank), encoding="utf-8")
    return str(data), {}


RGB_TASKS = {f"rgb_{lang}{kind}" for lang in ("en", "zh") for kind in ("", "_int", "_fact")}
MIRAGE_TASKS = {f"mirage_{name}" for name in ("mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq")}
KILT_TASKS = {
    f"kilt_{name}"
    for name in ("nq", "hotpotqa", "triviaqa", "zsre", "trex", "fever", "aidayago2", "wned", "cweb", "eli5", "wow")
}
TASK_DATA: dict[str, Callable[[Path], tuple[str, dict[str, Any]]]] = {
    "popqa": popqa,
    "pubhealth": pubhealth,
    "arc_challenge": arc,
    "squad": squad,
    "asqa": alce("asqa_eval_gtr_top100.json"),
    "demo": lambda folder: (str(Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"), {}),
    "fictional_multihop": lambda folder: (
        str(Path(ragbench.tasks.__file__).parent / "fictional_multihop" / "data" / "questions.jsonl"),
        {},
    ),
    "alce_asqa": alce("asqa_eval_gtr_top100.json"),
    "alce_qampari": alce("qampari_eval_gtr_top100.json"),
    "alce_eli5": alce("eli5_eval_bm25_top100.json"),
    "crag_t1": crag("crag_t1"),
    "crag_t2": crag("crag_t2"),
    "crag_t3": crag("crag_t3"),
    "crag_mm_single": crag_mm("crag_mm_single"),
    "crag_mm_multi": crag_mm("crag_mm_multi"),
    "omnieval_auto": lambda folder: (str(TEST_DATA / "omnieval" / "gen_datas_test_final"), {}),
    "omnieval_human": lambda folder: (str(TEST_DATA / "omnieval" / "gen_datas_test_final"), {}),
    "nq_open": open_qa("NQ-open.dev.jsonl"),
    "nq_open_flashrag": open_qa("nq_flashrag_dev.jsonl"),
    "triviaqa": open_qa("unfiltered-web-dev.json"),
    "triviaqa_flashrag": open_qa("triviaqa_flashrag_dev.jsonl"),
    "webquestions": open_qa("webquestions.examples.test.json"),
    "webquestions_flashrag": open_qa("webq_flashrag_test.jsonl"),
    "hotpotqa_distractor": open_qa("hotpot_dev_distractor_v1.json"),
    "hotpotqa_distractor_flashrag": open_qa("hotpotqa_flashrag_dev.jsonl"),
    "hotpotqa_fullwiki": open_qa("hotpot_dev_fullwiki_v1.json"),
    "2wikimultihopqa": open_qa("2wiki_dev.json"),
    "2wikimultihopqa_flashrag": open_qa("2wikimultihopqa_flashrag_dev.jsonl"),
    "musique": open_qa("musique_ans_v1.0_dev.jsonl"),
    "musique_flashrag": open_qa("musique_flashrag_dev.jsonl"),
    **{task: kilt(task) for task in KILT_TASKS},
    **{task: flashrag(task) for task in FLASHRAG_TASK_FILES},
    "multihop_rag": multihop_rag,
    "beir": lambda folder: (str(BEIR), {}),
    "vidore": lambda folder: (str(VIDORE_V1), {}),
    "trec_rag24": lambda folder: (
        str(TREC_RAG / "topics.rag24.test.txt"),
        {"qrels": str(TREC_RAG / "qrels.rag24.test-umbrela-all.txt")},
    ),
    "trec_rag25": lambda folder: (
        str(TREC_RAG / "trec_rag_2025_queries.jsonl"),
        {"qrels": str(TREC_RAG / "qrels.rag25.txt")},
    ),
    "browsecomp_plus": lambda folder: (str(BROWSECOMP_PLUS), {}),
    "frames": lambda folder: (str(FRAMES), {}),
    "freshqa": freshqa,
    "ragchecker": ragchecker,
    "deep_research_bench": deep_research_bench,
    "dragun_report": lambda folder: (str(DRAGUN / "data"), {}),
    "dragun_questions": lambda folder: (str(DRAGUN / "data"), {}),
    "argue_report": argue_report,
    **{task: rgb(task) for task in RGB_TASKS},
    **dict.fromkeys(MIRAGE_TASKS, mirage),
}
# Open domain: the examples carry no documents, so a system that searches is given what a user gives it, a
# corpus index (bm25 over the Varn corpus, `build_corpus_index`; the KILT sets search the KILT corpus sample,
# whose passages carry their page's wikipedia_id; MultiHop-RAG the chunks of its corpus sample, which carry
# their article's date and source; MIRAGE's sets a sample of MedRAG's corpora, tests/data/mirage/medcorp.jsonl;
# BEIR its folder's corpus.jsonl; ViDoRe, whose pages no text index holds, the Varn corpus (no page is found); BrowseComp-Plus its sample's corpus.jsonl; FreshQA and FRAMES, whose samples
# ask of Varn, the Varn corpus). closed_book and recorded search nothing.
CORPUS_TASKS = {
    "nq_open",
    "nq_open_flashrag",
    "triviaqa",
    "triviaqa_flashrag",
    "webquestions",
    "webquestions_flashrag",
    "hotpotqa_fullwiki",
    "musique_flashrag",
    *FLASHRAG_TASK_FILES,
    *KILT_TASKS,
    "multihop_rag",
    *MIRAGE_TASKS,
    "beir",
    "vidore",
    "trec_rag24",
    "trec_rag25",
    "browsecomp_plus",
    "frames",
    "freshqa",
    "ragchecker",
    "deep_research_bench",
    "dragun_report",
    "dragun_questions",
    "argue_report",
}
CORPUS_INDEX = {
    **dict.fromkeys(KILT_TASKS, "kilt"),
    "multihop_rag": "multihop_rag",
    **dict.fromkeys(MIRAGE_TASKS, "mirage"),
    "beir": "beir",
    "trec_rag24": "trec_rag",
    "trec_rag25": "trec_rag",
    "browsecomp_plus": "browsecomp_plus",
    "dragun_report": "dragun",
    "dragun_questions": "dragun",
}  # else "varn"
# outputs made outside ragbench: a predictions file, the user's application (a function, a service, or built with
# LangChain, LlamaIndex, Haystack or DSPy: tests/support/matrix_framework_apps.py)
OUTSIDE = ("recorded", "python", "http", "langchain", "llamaindex", "haystack", "dspy")
FRAMEWORK_APPS = {
    "langchain": {"runnable": "support.matrix_framework_apps:runnable", "inputs": {"task": "task", "id": "id"}},
    "llamaindex": {"engine": "support.matrix_framework_apps:query_engine"},
    "haystack": {
        "pipeline": "support.matrix_framework_apps:pipeline",
        "inputs": {"lookup": {"task": "task", "id": "id"}},
    },
    "dspy": {"module": "support.matrix_framework_apps:module", "inputs": {"task": "task", "id": "id"}},
}
SEARCHLESS = {"closed_book", *OUTSIDE}
# Distractor settings: the systems that search again with new queries rank the example's own paragraphs by
# each query (example_bm25); the others take them in the file's order (provided).
DISTRACTOR_TASKS = {
    "hotpotqa_distractor",
    "hotpotqa_distractor_flashrag",
    "2wikimultihopqa",
    "2wikimultihopqa_flashrag",
    "musique",
}
REQUERYING = {
    "llatrieval",
    "smart",
    "r1_searcher",
    "search_r1",
    "search_r1_own",
    "autorefine",
    "simple_deep_searcher",
    "o2_searcher",
    "corag",
    "rearag",
    "rqrag",
    "search_agent",
}


def build_corpus_index(folder: Path) -> Path:
    """bm25 indexes of the Varn corpus (6 passages, each a paragraph of the open_qa samples), under
    folder/varn, of the KILT corpus sample, under folder/kilt, and of the MultiHop-RAG corpus sample's
    chunks (`index multihop-rag-corpus`: one chunk per article, each under 256 tokens), under
    folder/multihop_rag, of the MIRAGE corpus sample (MedRAG's chunks as {id, title, text}), under
    folder/mirage, of the BEIR folder's corpus.jsonl, under folder/beir, of TREC RAG's two segmented shards, under
    folder/trec_rag, of the BrowseComp-Plus sample's
    corpus.jsonl, under folder/browsecomp_plus, and of DRAGUN's sample shard of segments, under folder/dragun."""
    from ragbench._retrieval.index.building import build_index
    from ragbench.tasks.multihop_rag.corpus import build_corpus

    build_index(OPEN_QA / "varn_corpus.jsonl", folder / "varn", "bm25", progress=False, registry=plugins_read_once())
    build_index(KILT / "kilt_passages.jsonl", folder / "kilt", "bm25", progress=False, registry=plugins_read_once())
    folder.mkdir(parents=True, exist_ok=True)
    build_corpus(MULTIHOP_RAG / "corpus.json", folder / "multihop_rag_chunks.jsonl")
    build_index(
        folder / "multihop_rag_chunks.jsonl",
        folder / "multihop_rag",
        "bm25",
        progress=False,
        registry=plugins_read_once(),
    )
    build_index(MIRAGE / "medcorp.jsonl", folder / "mirage", "bm25", progress=False, registry=plugins_read_once())
    build_index(BEIR / "corpus.jsonl", folder / "beir", "bm25", progress=False, registry=plugins_read_once())
    segmented = TREC_RAG / "msmarco_v2.1_doc_segmented"
    build_index(segmented, folder / "trec_rag", "bm25", progress=False, registry=plugins_read_once())
    build_index(
        BROWSECOMP_PLUS / "corpus.jsonl",
        folder / "browsecomp_plus",
        "bm25",
        progress=False,
        registry=plugins_read_once(),
    )
    segments = DRAGUN / "msmarco_v2.1_doc_segmented"
    build_index(segments, folder / "dragun", "bm25", progress=False, registry=plugins_read_once())
    return folder


def retriever_options(task: str, system: str, corpus_index: Path | None, own_documents: bool | None) -> dict[str, Any]:
    """The cell's --retriever and --retriever-arg (none given: the examples' own documents, in their order)."""
    if task in CORPUS_TASKS:
        if system in SEARCHLESS:
            return {}
        if corpus_index is None:
            raise ValueError(f"the {task} cell of {system} searches a corpus: pass corpus_index (build_corpus_index)")
        index = corpus_index / CORPUS_INDEX.get(task, "varn")
        return {"retriever": "bm25", "retriever_args": {"index": str(index)}}
    if own_documents is False:  # open domain without a corpus here (OmniEval): no documents, on purpose
        return {"retriever": "none"}
    if task in DISTRACTOR_TASKS and system in REQUERYING:
        return {"retriever": "example_bm25"}
    return {}


def cited(text: str) -> str:
    """ALCE-style citations: each sentence (ending in '.') cites document [1]."""
    return text.replace(".", " [1].") if text.endswith(".") else text + " [1]"


def first_answer(example: Example) -> str:
    return example.gold["answers"][0]


def rgb_answer(example: Example) -> str:
    """Every answer item of an RGB record (an alias list: its first); on the counterfactual sets after the
    system message's sentence for a detected factual error."""
    answer = " ".join(item if isinstance(item, str) else item[0] for item in example.gold["rgb_answer"])
    if "fakeanswer" in example.gold:
        return (
            "There are factual errors in the provided documents. "
            if example.question.isascii()
            else "提供文档的文档存在事实性错误。"
        ) + answer
    return answer


# The answer a model gives to each task's questions: RIGHT[task](example) is the gold answer (or the
# gold long answer, with citations on ALCE tasks); WRONG_ANSWER[task](example) shares no word with it
# (the other label on PubHealth, another letter on ARC).
RIGHT: dict[str, Callable[[Example], str]] = {
    **{task: first_answer for task in CORPUS_TASKS | DISTRACTOR_TASKS},
    "popqa": first_answer,
    "pubhealth": first_answer,
    "arc_challenge": first_answer,
    "squad": first_answer,
    "demo": first_answer,
    "fictional_multihop": first_answer,
    "omnieval_auto": first_answer,
    "omnieval_human": first_answer,
    "asqa": lambda e: cited(e.gold["long_answers"][0]),
    "alce_asqa": lambda e: cited(e.gold["long_answers"][0]),
    "alce_qampari": lambda e: ", ".join(cited(alias[0]) for alias in e.gold["answers"]) + ".",
    "alce_eli5": lambda e: " ".join(cited(claim) for claim in e.gold["claims"]),
    "crag_t1": lambda e: e.gold["answer"],
    "crag_t2": lambda e: e.gold["answer"],
    "crag_t3": lambda e: e.gold["answer"],
    "crag_mm_single": first_answer,
    "crag_mm_multi": first_answer,
    **{task: rgb_answer for task in RGB_TASKS},
    "beir": lambda e: e.question,  # no answer is scored: BEIR's gold is the relevant documents
    "vidore": lambda e: e.question,  # ... and ViDoRe's the relevant pages
    "trec_rag24": lambda e: e.question,  # TREC RAG's retrieval measures score the segments shown, not the answer
    "trec_rag25": lambda e: e.question,
    "deep_research_bench": lambda e: e.gold["reference_report"],
    "dragun_report": lambda e: e.question,  # AutoJudge's scripted judge credits any report but the wrong one
    "dragun_questions": lambda e: e.question,  # ... and any question but the wrong one
    "argue_report": lambda e: e.question,  # the scripted ARGUE judge answers any report alike
}
WRONG_ANSWER: dict[str, Callable[[Example], str]] = {
    "pubhealth": lambda e: {"true": "false", "false": "true"}[e.gold["answers"][0]],
    "arc_challenge": lambda e: "D",
    "kilt_fever": lambda e: {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}[e.gold["answers"][0]],
    "deep_research_bench": lambda e: WRONG_REPORT,  # "zzz" alone RACE's cleaning would find too short to judge
}


# Self-RAG's long form cites by itself: its model writes uncited segments ending in "." and the system
# replaces each final "." by " [k]." (selfrag_prompts.cite_segments).
SELF_CITING = {("selfrag", "asqa"), ("selfrag", "alce_asqa"), ("selfrag", "alce_eli5")}

# Methods that parse their answer out of a format of their own: the scripted answer is written in it.
ANSWER_FORMATS = {
    "ircot": "So the answer is: {}",
    "ircot_fixed": "So the answer is: {}",
    "self_ask": "So the final answer is: {}",
    "self_ask_fixed": "So the final answer is: {}",
}
# FLARE keeps one sentence per round and goes on to its last round: the scripted model writes the answer
# while nothing is kept yet (the prompt ends with the question), in tokens FLARE reads as an unsure empty
# token (probability 0.1), then the question and the answer: FLARE searches the question, as the other systems do
# (with a sentence longer than the question, the question and the answer); then nothing.
SENTENCE_BY_SENTENCE = {"flare"}


def reconstructor_rules(task: str, system: str, examples: list[Example]) -> list[dict[str, str]]:
    """SMART's Reconstructor on a corpus task searches the question (`Search(<question>)`). Asked as any
    other prompt, the scripted model would make the answer the search intent: "zzz" shares no word with any
    passage, and bm25 returns none for it, so the second record's cell would show nothing of SMART's ranking.
    On the distractor tasks example_bm25 keeps the ties of a query that matches nothing in the file's order:
    there SMART searches its answer, a query of its own."""
    if system != "smart" or task not in CORPUS_TASKS:
        return []
    return [
        {"pattern": re.escape(e.question) + r".*<\|Reconstructor\|>:\n$", "response": f"Search({e.question})"}
        for e in examples
    ]


# What a reasoning-search model writes to search (the question) and to answer, and what tells the two apart
# (the passages it was given): (search, answer, after the passages).
SEARCH_AND_ANSWER = {
    "r1_searcher": (" <|begin_of_query|> {q} <|end_of_query|>", " <answer> {a} </answer>", r"<\|end_of_documents\|>"),
    "search_r1": (" <search> {q} </search>", " <answer> {a} </answer>", "</information>"),
    "search_r1_own": (" <search> {q} </search>", " <answer> {a} </answer>", "</information>"),
    "autorefine": (" <search> {q} </search>", " <answer> {a} </answer>", "</documents>"),
    "simple_deep_searcher": (
        " <|begin_search_query|> {q} <|end_search_query|>",
        " \\boxed{{{a}}}",
        r"<\|end_search_result\|>",
    ),
    "o2_searcher": ("<search>\n<query>{q}</query>\n</search>", "<answer> {a} </answer>", "</learnings>"),
    "rearag": (
        "Thought 1: look it up.\nAction 1: ```\n{{'function': 'search', 'parameters': {{'query': {q!r}}}}}\n```",
        "Thought 2: done.\nAction 2: ```\n{{'function': 'finish', 'parameters': {{'answer': {a!r}}}}}\n```",
        "'function': 'search'",
    ),
}


def searching_rules(system: str, examples: list[Example], outputs: list[str]) -> list[dict[str, str]]:
    """The systems that search with queries of their own before they answer: the scripted model searches the
    question once, then answers in the system's format with the answer the cell expects (ReaRAG's short
    answer and CoRAG's final answer are that answer; CoRAG's sub-queries the question)."""
    rules = []
    for example, output in zip(examples, outputs):
        question = re.escape(example.question)
        if system == "corag":
            rules.append({"pattern": rf"## Main query to answer\n{question}\n", "response": example.question})
        elif system == "plan_search_write":  # its plan: the question, its one sub-question
            rules.append({"pattern": rf"Question: {question}\n\nSub-questions:", "response": example.question})
        elif system == "rearag":
            rules.append({"pattern": rf"\[Question\]\n{question}\n\[Reference answer\]\n", "response": output})
        if system in SEARCH_AND_ANSWER:
            search, answer, searched = SEARCH_AND_ANSWER[system]
            rules += [
                {"pattern": rf"{question}.*{searched}", "response": answer.format(a=output)},
                {"pattern": question, "response": search.format(q=example.question)},
            ]
    return rules


def search_agent_rules(system: str, examples: list[Example], outputs: list[str]) -> list[dict[str, Any]]:
    """search_agent calls tools natively: on its prompt the scripted model searches the question and asks for a
    document named after the example (which no corpus holds: get_document's "not found" answer, the last
    message of the next turn, tells the examples apart); on that answer it answers the cell's answer."""
    if system != "search_agent":
        return []
    rules: list[dict[str, Any]] = []
    for index, (e, output) in enumerate(zip(examples, outputs)):
        marker = f"matrix-{index}"  # ASCII: get_document's answer is JSON with non-ASCII characters escaped
        calls = [
            {"id": "call_0", "name": "search", "arguments": {"query": e.question}},
            {"id": "call_1", "name": "get_document", "arguments": {"docid": marker}},
        ]
        rules += [
            {"pattern": re.escape(f"docid '{marker}' not found"), "response": output},
            {"pattern": re.escape(f"Question: {e.question}\n"), "response": {"tool_calls": calls}},
        ]
    return rules


# SuRe: the scripted model offers the cell's answer as candidate (a) and OTHER_CANDIDATE (sharing no word with
# any gold) as (b), writes each candidate's summary ("It is so.", (b)'s: OTHER_CANDIDATE), validates only (a)'s
# and ranks (b)'s summary below the other: validation [1, 0], ranking [1, 0], so SuRe answers (a), as
# parse_candidates reads it (its text up to "(b)", first line, commas removed).
SURE = {"sure", "sure_fixed"}
OTHER_CANDIDATE = "yyy"
SURE_STEP_RULES = [
    {"pattern": rf"Prediction: {OTHER_CANDIDATE}\nPassage: .*Does the passage correctly support", "response": "False"},
    {"pattern": r"Does the passage correctly support the prediction\?", "response": "True"},
    {"pattern": rf"\nPassage 1: {OTHER_CANDIDATE}\n.*Choices: \[Passage 1,Passage 2\]", "response": "Passage 2"},
    {"pattern": r"Choices: \[Passage 1,Passage 2\]", "response": "Passage 1"},
    {"pattern": rf"\nPrediction: {OTHER_CANDIDATE}\nPassage:$", "response": OTHER_CANDIDATE},
    {"pattern": r"\nPrediction: .*\nPassage:$", "response": "It is so."},
]


def sure_rules(system: str, examples: list[Example], outputs: list[str]) -> list[dict[str, str]]:
    if system not in SURE:
        return []
    return SURE_STEP_RULES + [
        {
            "pattern": rf"two correct candidates.*Question: {re.escape(e.question)}\nAnswer:$",
            "response": f"(a) {output}, (b) {OTHER_CANDIDATE}",
        }
        for e, output in zip(examples, outputs)
    ]


# RQ-RAG expands every path on its three query tokens (depth 3: 39 searches) and answers on each (40 answers),
# keeping the most confident (the first on ties). The scripted model writes the question as every query and the
# cell's answer as every answer, certain of each token (confidence 1) after evidence, less sure (0.5) on the
# root path, which searched nothing: RQ-RAG answers from the first path of depth 1, the question's top 5.
def rqrag_rules(system: str, examples: list[Example], outputs: list[str]) -> list[dict[str, Any]]:
    if system != "rqrag":
        return []
    rules: list[dict[str, Any]] = []
    for e, output in zip(examples, outputs):
        question = re.escape(e.question)
        unsure = {
            "response": f"{output}[EOS]",
            "tokens": ["", output, "[EOS]"],
            "logprobs": [{"": 0.0}, {output: math.log(0.5)}, {"[EOS]": 0.0}],
        }
        rules += [
            {
                "pattern": rf"{question}.*\[S_(Rewritten|Decomposed|Disambiguated)_Query\]$",
                "response": f"{e.question}[EOS]",
            },
            {"pattern": rf"{question}.*\[/R_Evidences\]\[A_Response\]$", "response": f"{output}[EOS]"},
            {"pattern": rf"{question}.*\[A_Response\]$", "response": unsure},
        ]
    return rules


# SKR and Adaptive-RAG take their per-example decisions from a judgements file (system arg judgements=FILE):
# every example is sent to the route that retrieves (SKR true; Adaptive-RAG "B", single-step), which answers from
# the question's top 5 in FlashRAG's naive RAG template: the cell's answer as the model writes it.
RETRIEVING_JUDGEMENT = {"skr": True, "adaptive_rag": "B"}


def answers(task: str, examples: list[Example], system: str = "") -> list[str]:
    """The scripted model's answers: the gold for the first half of the examples, wrong for the rest."""
    half = (len(examples) + 1) // 2
    out = [RIGHT[task](e) if i < half else WRONG_ANSWER.get(task, lambda e: WRONG)(e) for i, e in enumerate(examples)]
    if (system, task) in SELF_CITING:
        out = [re.sub(r" \[\d+\]", "", text) if text != WRONG else WRONG + "." for text in out]
    return [ANSWER_FORMATS.get(system, "{}").format(text) for text in out]


def question_rules(system: str, examples: list[Example], outputs: list[str]) -> list[dict[str, str]]:
    """The rules that answer each example's prompts (those holding its question)."""
    if system not in SENTENCE_BY_SENTENCE:
        return [{"pattern": re.escape(e.question), "response": output} for e, output in zip(examples, outputs)]
    return [
        rule
        for e, output in zip(examples, outputs)
        for rule in (
            {
                "pattern": re.escape(e.question) + "$",
                "response": {
                    "response": output,
                    "tokens": ["", e.question, output],
                    "logprobs": [{"": math.log(0.1)}, {e.question: 0.0}, {output: 0.0}],
                },
            },
            {"pattern": re.escape(e.question), "response": ""},
        )
    ]


_EXAMPLES: dict[tuple[str, int], tuple[list[Example], bool | None, set[str]]] = {}


def task_examples(
    task: str, data: str, task_args: dict[str, Any], limit: int
) -> tuple[list[Example], bool | None, set[str]]:
    """The first `limit` examples of the cell's task, as the run will read them (read once per task), whether
    they carry documents of their own (`Task.own_documents`) and what its metrics call ("judge", "nli")."""
    if (task, limit) not in _EXAMPLES:
        from ragbench._config.judging import RunJudging
        from ragbench._config.what import RunWhat
        from ragbench._run.plan.planning import plan

        planned = plan(
            RunWhat(tasks=[task], system="closed_book", data={task: data}, task_args=task_args),
            RunJudging(judges=["scripted:echo"], nli="scripted:echo"),
            plugins_read_once(),
        )[0]
        _EXAMPLES[task, limit] = (
            [e for e in planned.task.examples() if isinstance(e, Example)][:limit],
            planned.task.own_documents,
            {need for m in planned.metrics for need in m.declares.needs},
        )
    return _EXAMPLES[task, limit]


def cell_config(
    task: str, system: str, folder: Path, limit: int = 2, corpus_index: Path | None = None
) -> dict[str, Any]:
    """RunConfig fields of one matrix cell: the task's small data, one scripted engine as model, judge
    and NLI judge (where the task's metrics call them) that answers the first half of the questions with the gold and the rest wrongly
    (`answers`), and the retriever a user would give the system on the task (`retriever_options`; an open
    domain task's needs `corpus_index`, from `build_corpus_index`)."""
    folder.mkdir(parents=True, exist_ok=True)
    data, task_args = TASK_DATA[task](folder)
    examples, own_documents, needs = task_examples(task, data, task_args, limit)
    outputs = answers(task, examples, system)
    rules = folder / "rules.json"
    rules.write_text(
        json.dumps(
            STEP_RULES
            + reconstructor_rules(task, system, examples)
            + searching_rules(system, examples, outputs)
            + search_agent_rules(system, examples, outputs)
            + sure_rules(system, examples, outputs)
            + rqrag_rules(system, examples, outputs)
            + question_rules(system, examples, outputs)
        )
    )
    model = f"scripted:{rules}"
    config: dict[str, Any] = {
        "tasks": [task],
        "system": system,
        "model": model,
        "judges": [model] if "judge" in needs else [],
        "nli": model if "nli" in needs else None,
        "data": {task: data},
        "task_args": task_args,
        "limit": limit,
        "progress": False,
        "bootstrap_iters": 50,
        "output": str(folder / "run"),
        **retriever_options(task, system, corpus_index, own_documents),
    }
    if system in OUTSIDE:  # outputs made elsewhere: a predictions file, or the user's application answering them
        lines = [
            {"id": e.id, "output": output, "docs": [d.to_dict() for d in e.docs[:1]]}
            for e, output in zip(examples, outputs)
        ]
        predictions = write_jsonl(folder / "predictions.jsonl", lines)
        config["system_args"] = {"path": str(predictions)}
        if system != "recorded":
            matrix_apps.ANSWERS.update(
                {(task, line["id"]): {"answer": line["output"], "passages": line["docs"]} for line in lines}
            )
            matrix_apps.BY_QUESTION.clear()
            for example, line in zip(examples, lines):
                known = matrix_apps.BY_QUESTION.setdefault(example.question, matrix_apps.ANSWERS[(task, line["id"])])
                assert known == matrix_apps.ANSWERS[(task, line["id"])], f"{task}: one question, two answers"
            if system == "python":
                config["system_args"] = {"callable": "support.matrix_apps:answer"}
            elif system == "http":
                config["system_args"] = {
                    "url": matrix_apps.service_url(),
                    "preset": "json",
                    "body": {"task": "{{ task }}", "id": "{{ id }}"},
                    "traces": False,
                }
            else:
                config["system_args"] = FRAMEWORK_APPS[system]
    if system == "search_agent":  # whole texts (no tokenizer here); get_document reads the Varn corpus
        config["system_args"] = {
            "snippet_max_tokens": 0,
            "get_document": True,
            "corpus": str(OPEN_QA / "varn_corpus.jsonl"),
        }
    if system == "rqrag":  # one level of the tree (three expansions, each searching and answering): 7 calls an
        # example, not max_depth 3's 79 (an eighth of the matrix's CPU); tests/systems/rqrag grows the tree deeper
        config["system_args"] = {"max_depth": 1}
    if system in RETRIEVING_JUDGEMENT:
        judgements = folder / "judgements.json"
        judgements.write_text(json.dumps({e.id: RETRIEVING_JUDGEMENT[system] for e in examples}))
        config["system_args"] = {"judgements": str(judgements)}
    return config


# A default answer for tests that run a cell-like configuration of their own (tests/tasks/alce/test_asqa_task.py).
RULES = [*STEP_RULES, {"response": "answer 1 [1]. true B Paris"}]
