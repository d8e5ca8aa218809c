"""The common QA sets shipped as YAML tasks (tasks/open_qa): each loads its sample - ragbench's own
made-up records in the exact upstream shape (tests/data/open_qa) - and scores known answers to the
hand-worked numbers in the comments. The questions are the same in a set's two formats, so both formats
score the same."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import ROOT, TEST_DATA
from ragbench.tasks import REGISTRATIONS
from ragbench.tasks.open_qa.formats import webquestions_records
from ragbench.testing import PreflightError, Registry, installed_registry
from support.helpers import run, samples

SAMPLES = TEST_DATA / "open_qa"
SHIPPED = sorted(path.stem for path in (ROOT / "tasks" / "open_qa").glob("*.yaml") if path.name != REGISTRATIONS)


def score(
    tmp_path: Path,
    task: str,
    sample: str,
    rules: list[tuple[str, str]] | None = None,
    predictions: list[dict] | None = None,
    **config,
) -> dict:
    """The task run on its sample: a scripted model answering by `rules` (question pattern -> answer), or
    the `recorded` system reading `predictions`; its results' values for the task, and the results."""
    if predictions is not None:
        path = tmp_path / "predictions.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
        config.update(system="recorded", system_args={"path": str(path)})
    else:
        path = tmp_path / "rules.json"
        path.write_text(json.dumps([{"pattern": p, "response": r} for p, r in rules]), encoding="utf-8")
        config.setdefault("system", "closed_book")
        config["model"] = f"scripted:{path}"
    results = run(tmp_path, tasks=[task], data={task: str(SAMPLES / sample)}, **config)
    assert results["counts"][task]["failed"] == 0 and results["counts"][task]["bad_records"] == 0
    return results["results"][task]


# --- NQ-open ------------------------------------------------------------------------------------------
NQ_RULES = [
    ("fishing town of olm", "Ansgar Pell"),
    ("capital of varn", "It is Evermouth."),
    ("kiribati sound ferry", "1903"),
    ("how many lakes", "41 lakes"),
    ("which mountains", "Hollow Mountains"),
]
# em:       1, 0, 0, 0, 1 ("hollow mountains" = "the Hollow Mountains" normalised)            -> 2/5
# f1:       1; "it is evermouth" vs "evermouth" 2*(1/3*1)/(1/3+1) = 1/2 (vs "port city of evermouth"
#           2/7); 0; "41 lakes" vs "41" 2*(1/2*1)/(1/2+1) = 2/3; 1                             -> (1+1/2+2/3+1)/5
# cover_em: 1, 1 ("evermouth" in "it is evermouth"), 0, 1 ("41" in "41 lakes"), 1              -> 4/5
NQ_SCORES = {"em": 2 / 5, "f1": (1 + 1 / 2 + 2 / 3 + 1) / 5, "cover_em": 4 / 5}


# --- TriviaQA -----------------------------------------------------------------------------------------
TRIVIA_RULES = [
    ("founded the Varn fishing town", "Ansgar Pell"),
    ("capital of which island", "The Isle of Varn"),
    ("Kiribati Sound ferry", "in 1902"),
    ("How many lakes", "forty one"),
    ("mountain range", "the Alps"),
]
# em:       1, 1 ("isle of varn" is an alias), 0, 1 ("forty one" is an alias; "Forty-one" normalises to
#           "fortyone"), 0                                                                    -> 3/5
# f1:       1, 1, "in 1902" vs "1902" 2/3, 1, 0                                                -> (3+2/3)/5
# cover_em: 1, 1, 1, 1, 0                                                                      -> 4/5
TRIVIA_SCORES = {"em": 3 / 5, "f1": (3 + 2 / 3) / 5, "cover_em": 4 / 5}


def test_triviaqa_gold_is_the_official_evaluations_normalized_aliases(tmp_path):
    score(tmp_path, "triviaqa", "unfiltered-web-dev.json", TRIVIA_RULES)
    first = samples(tmp_path / "run", "triviaqa")[0]
    assert first["id"] == "tc_1" and first["gold"] == {"answers": ["a pell", "ansgar pell"]}


# Values from running TriviaQA's official evaluation (mandarjoshi90/triviaqa, evaluation/
# triviaqa_evaluation.py evaluate_triviaqa) on this file and these predictions: exact_match
# 66.67, f1 73.33; per question em 1, 1, 0, 1, 1, 0 and f1 1, 1, 0.4, 1, 1, 0. SQuAD's normalisation
# (punctuation deleted, not turned into spaces) gives em 1/6: only "1,000 metres" = "1000 metres".
TRIVIA_PUNCTUATION = [  # id, NormalizedAliases (the official normalize_answer of the aliases), HumanAnswers, prediction
    ("tp_1", ["bob s diner"], [], "Bob's Diner"),
    ("tp_2", ["beatles"], [], "the_beatles"),
    ("tp_3", ["1000 metres"], [], "1,000 metres"),
    ("tp_4", ["rock and roll"], [], "\u2018Rock-and-roll\u2019"),
    ("tp_5", ["milne"], ["A. A. Milne"], "A.A. Milne"),
    ("tp_6", ["london"], [], "Paris"),
]


def test_triviaqa_em_and_f1_are_the_official_evaluations(tmp_path):
    data = {
        "Domain": "Wikipedia",
        "VerifiedEval": False,
        "Version": 1.0,
        "Data": [
            {
                "Question": f"Question {qid}?",
                "QuestionId": qid,
                "EntityPages": [],
                "SearchResults": [],
                "Answer": {
                    "Aliases": aliases,
                    "NormalizedAliases": aliases,
                    "Value": aliases[0],
                    "Type": "WikipediaEntity",
                    **({"HumanAnswers": human} if human else {}),
                },
            }
            for qid, aliases, human, _ in TRIVIA_PUNCTUATION
        ],
    }
    sample = tmp_path / "unfiltered-web-dev.json"
    sample.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    predictions = [{"id": qid, "output": output} for qid, _, _, output in TRIVIA_PUNCTUATION]
    values = score(tmp_path, "triviaqa", str(sample), predictions=predictions)
    assert values["em"] == pytest.approx(4 / 6) and values["f1"] == pytest.approx(4.4 / 6)
    rows = sorted(samples(tmp_path / "run", "triviaqa"), key=lambda row: row["id"])
    assert [row["scores"]["em"] for row in rows] == [1, 1, 0, 1, 1, 0]
    assert [row["scores"]["f1"] for row in rows] == pytest.approx([1, 1, 0.4, 1, 1, 0])
    (tmp_path / "squad").mkdir()
    squad = score(
        tmp_path / "squad", "triviaqa", str(sample), predictions=predictions, metric_args={"em.normalize": "squad"}
    )
    assert squad["em"] == pytest.approx(1 / 6)


def test_an_unknown_normalisation_is_refused_before_the_run(tmp_path):
    with pytest.raises(PreflightError, match="metric em takes one of squad, triviaqa for normalize"):
        score(tmp_path, "triviaqa", "unfiltered-web-dev.json", TRIVIA_RULES, metric_args={"em.normalize": "nfkc"})
    assert not (tmp_path / "run").exists()


# --- WebQuestions -------------------------------------------------------------------------------------
WEBQ_RULES = [
    ("who founded olm", "Ansgar Pell"),
    ("capital of varn", "Evermouth city"),
    ("ferry open", "1902"),
    ("what does trask make", "blue cheese"),
    ("ansgar pell born", "Olm"),
]
# em:       1, 0, 1, 0, 0                                                                      -> 2/5
# f1:       1, "evermouth city" vs "evermouth" 2/3, 1, "blue cheese" vs "cheese" 2/3 (vs "trask blue"
#           1/2), 0                                                                             -> (2+4/3)/5
# cover_em: 1, 1, 1, 1 ("cheese" in "blue cheese"), 0                                           -> 4/5
WEBQ_SCORES = {"em": 2 / 5, "f1": (2 + 4 / 3) / 5, "cover_em": 4 / 5}


OPEN_DOMAIN = [  # task, sample, rules, scores (FlashRAG's f1 is hotpot_f1: the same here, no yes/no answers)
    ("nq_open", "NQ-open.dev.jsonl", NQ_RULES, NQ_SCORES),
    ("nq_open_flashrag", "nq_flashrag_dev.jsonl", NQ_RULES, NQ_SCORES),
    ("triviaqa", "unfiltered-web-dev.json", TRIVIA_RULES, TRIVIA_SCORES),
    ("triviaqa_flashrag", "triviaqa_flashrag_dev.jsonl", TRIVIA_RULES, TRIVIA_SCORES),
    ("webquestions", "webquestions.examples.test.json", WEBQ_RULES, WEBQ_SCORES),
    ("webquestions_flashrag", "webq_flashrag_test.jsonl", WEBQ_RULES, WEBQ_SCORES),
]


@pytest.mark.parametrize("task,sample,rules,scores", OPEN_DOMAIN, ids=[case[0] for case in OPEN_DOMAIN])
def test_open_domain_sets_in_both_formats(tmp_path, task, sample, rules, scores):
    expected = {
        ("hotpot_f1" if key == "f1" and task.endswith("_flashrag") else key): value for key, value in scores.items()
    }
    assert score(tmp_path, task, sample, rules) == pytest.approx(expected)


def test_webquestions_answers_are_read_from_target_value(tmp_path):
    path = tmp_path / "webquestions.examples.test.json"
    path.write_text(
        json.dumps(
            [
                {
                    "url": "u",
                    "utterance": "q1?",
                    "targetValue": '(list (description Abduction) (description "Valentine\'s Day") '
                    '(description "The \\"Big\\" One"))',
                },
                {"url": "u", "utterance": "q2?", "targetValue": "Abduction"},
            ]
        ),
        encoding="utf-8",
    )
    first, second = [record for _, record in webquestions_records(path)]
    assert first["answers"] == ["Abduction", "Valentine's Day", 'The "Big" One']
    assert "targetValue" in str(second) and second.line == 2  # a bad record, counted


# --- HotpotQA -----------------------------------------------------------------------------------------
HOTPOT_RULES = [
    ("founder of Olm born", "Trask"),
    ("both on the island", "yes, both are"),
    ("Trask known for", "cheese and wine"),
    ("founded first", "Olm"),
]
# em:        1, 0, 0, 0                                                                        -> 1/4
# hotpot_f1: 1, 0 (gold "yes": any other answer scores 0; f1 would give 1/2), "cheese and wine" vs
#            "cheese" 2*(1/3*1)/(1/3+1) = 1/2, 0                                               -> 3/8
# cover_em:  1, 1 ("yes" in "yes both are"), 1, 0                                               -> 3/4
HOTPOT_ANSWERS = {"em": 1 / 4, "hotpot_f1": 3 / 8, "cover_em": 3 / 4}
# vanilla, top_n=2, the file's order: the first two paragraphs are shown
#   1: {Olm, Varn} vs {Olm, Ansgar Pell}            recall 1/2, precision 1/2, f1 1/2, em 0
#   2: {Olm, Evermouth} vs {Olm, Evermouth}         1, 1, 1, 1
#   3: {Varn, Kiribati Sound} vs {Trask}            0, 0, 0, 0
#   4: {Evermouth, Trask} vs {Olm, Evermouth}       1/2, 1/2, 1/2, 0
HOTPOT_SUPPORT = {"support_recall": 2 / 4, "support_precision": 2 / 4, "support_f1": 2 / 4, "support_em": 1 / 4}


@pytest.mark.parametrize(
    "task,sample",
    [
        ("hotpotqa_distractor", "hotpot_dev_distractor_v1.json"),
        ("hotpotqa_distractor_flashrag", "hotpotqa_flashrag_dev.jsonl"),
    ],
)
def test_hotpotqa_distractor_formats(tmp_path, task, sample):
    values = score(tmp_path, task, sample, HOTPOT_RULES, system="vanilla", system_args={"top_n": 2})
    assert values == pytest.approx({**HOTPOT_ANSWERS, **HOTPOT_SUPPORT})
    first = samples(tmp_path / "run", task)[0]
    assert first["meta"] == {"type": "bridge", "level": "medium"}
    assert [doc["title"] for doc in first["prediction"]["docs"]] == ["Olm", "Varn"]
    assert first["prediction"]["docs"][0]["text"] == (
        "Olm is a fishing town on the north coast of Varn. It was founded in 1788 by the brewer Ansgar Pell."
    )


def test_example_bm25_shows_the_passages_the_questions_ask_for(tmp_path):
    values = score(
        tmp_path,
        "hotpotqa_distractor",
        "hotpot_dev_distractor_v1.json",
        HOTPOT_RULES,
        system="vanilla",
        system_args={"top_n": 2},
        retriever="example_bm25",
    )
    # BM25 over each question's 4 paragraphs ranks first those sharing its words: 1 {Ansgar Pell
    # (village, born), Olm}, 2 {Olm, Evermouth}, 3 {Trask (trask, known, winter, market), another},
    # 4 {Evermouth, Olm}: every supporting passage is shown; precision (1 + 1 + 1/2 + 1)/4
    assert values["support_recall"] == 1.0 and values["support_precision"] == pytest.approx(7 / 8)
    assert values["em"] == HOTPOT_ANSWERS["em"]


def smart_intents(request) -> str:
    """An instruct model under SMART's prompted mode: two search intents, no passage relevant, "Trask"."""
    prompt = request.prompt if request.prompt is not None else request.messages[-1][1]
    if prompt.endswith("Search Intent:"):
        return "Search Intent: who founded the town of Olm; the mountain village where Ansgar Pell was born"
    if prompt.endswith("Rating:"):
        return " [Irrelevant]\n\nExtracted span: None."
    return "Trask"


@pytest.mark.parametrize("retriever", ["provided", "example_bm25"])
def test_a_multi_step_system_searches_each_intent_among_the_examples_passages(tmp_path, retriever):
    results = run(
        tmp_path,
        tasks=["musique"],
        data={"musique": str(SAMPLES / "musique_ans_v1.0_dev.jsonl")},
        system="smart",
        system_args={"mode": "prompted", "top_k": 2},
        retriever=retriever,
        model=f"scripted:{__name__}:smart_intents",
        limit=1,
    )
    assert results["counts"]["musique"]["failed"] == 0
    steps = [s for s in samples(tmp_path / "run", "musique")[0]["trace"] if s["kind"] == "retrieval"]
    # paragraphs: 0 Varn, 1 Olm, 2 Kiribati Sound, 3 Ansgar Pell, 4 Trask
    if retriever == "provided":  # the given order whatever the query: SMART takes 2 x 2 passages, no search by intent
        assert [step["response"]["ids"] for step in steps] == [["0", "1", "2", "3"]]
        return
    # each intent ranks the paragraphs by its own words: "founded", "town", "olm" put Olm first; "mountain",
    # "village", "ansgar", "pell", "born" put Ansgar Pell, then Trask ("village", "mountains")
    assert [step["request"]["query"] for step in steps] == [
        "who founded the town of Olm",
        "the mountain village where Ansgar Pell was born",
    ]
    assert [step["response"]["ids"][0] for step in steps] == ["1", "3"] and steps[1]["response"]["ids"] == ["3", "4"]


HOTPOT_RECORDED = [  # the fullwiki setting: whatever a corpus retriever found, as a predictions file says
    {
        "id": "5c8a01",
        "output": "Trask",
        "docs": [{"title": "Ansgar Pell", "text": "..."}, {"title": "Trask", "text": "..."}],
    },
    {
        "id": "5c8a02",
        "output": "yes, both are",
        "docs": [{"title": t, "text": "..."} for t in ("Olm", "Evermouth", "Varn")],
    },
    {"id": "5c8a03", "output": "cheese and wine", "docs": [{"title": "Trask", "text": "..."}]},
    {"id": "5c8a04", "output": "Olm", "docs": []},
]


def test_hotpotqa_fullwiki_release_format(tmp_path):
    # 1: {Ansgar Pell, Trask} vs {Olm, Ansgar Pell}        recall 1/2, precision 1/2, f1 1/2, em 0
    # 2: {Olm, Evermouth, Varn} vs {Olm, Evermouth}       1, 2/3, 2*(2/3)/(5/3) = 4/5, 0
    # 3: {Trask} vs {Trask}                               1, 1, 1, 1
    # 4: nothing shown                                    0, 0, 0, 0
    support = {
        "support_recall": (1 / 2 + 1 + 1) / 4,
        "support_precision": (1 / 2 + 2 / 3 + 1) / 4,
        "support_f1": (1 / 2 + 4 / 5 + 1) / 4,
        "support_em": 1 / 4,
    }
    values = score(tmp_path, "hotpotqa_fullwiki", "hotpot_dev_fullwiki_v1.json", predictions=HOTPOT_RECORDED)
    assert values == pytest.approx({**HOTPOT_ANSWERS, **support})


def test_hotpotqa_fullwiki_runs_without_documents_only_when_asked(tmp_path):
    with pytest.raises(PreflightError, match="task hotpotqa_fullwiki: its examples carry no documents"):
        score(tmp_path, "hotpotqa_fullwiki", "hotpot_dev_fullwiki_v1.json", HOTPOT_RULES, system="vanilla")
    assert not (tmp_path / "run").exists()
    values = score(
        tmp_path, "hotpotqa_fullwiki", "hotpot_dev_fullwiki_v1.json", HOTPOT_RULES, system="vanilla", retriever="none"
    )
    assert values["support_recall"] == 0.0  # nothing to show
    prompt = samples(tmp_path / "run", "hotpotqa_fullwiki")[0]["trace"][-1]["request"]["prompt"]
    assert prompt.startswith("Answer the question based on your own knowledge.")


def fullwiki_over(tmp_path: Path, corpus: str) -> dict:
    """hotpotqa_fullwiki's sample scored with vanilla's top 2 of a BM25 index of the sample corpus `corpus`."""
    from ragbench.testing import build_index

    index = tmp_path / "index"
    build_index(SAMPLES / corpus, index, "bm25", chunk_size=4, progress=False, registry=installed_registry())
    return score(
        tmp_path,
        "hotpotqa_fullwiki",
        "hotpot_dev_fullwiki_v1.json",
        HOTPOT_RULES,
        system="vanilla",
        system_args={"top_n": 2},
        retriever="bm25",
        retriever_args={"index": str(index)},
    )


def test_hotpotqa_fullwiki_with_a_corpus_index(tmp_path):
    values = fullwiki_over(tmp_path, "varn_corpus.jsonl")
    # bm25 over the 6-passage corpus, top 2: {Ansgar Pell, Olm}, {Evermouth, Varn} (Varn's "island" and
    # two "varn" outrank Olm), {Trask, Ansgar Pell}, {Evermouth, Olm}: recall (1 + 1/2 + 1 + 1)/4
    assert values["support_recall"] == pytest.approx(3.5 / 4) and values["em"] == HOTPOT_ANSWERS["em"]
    steps = [s for s in samples(tmp_path / "run", "hotpotqa_fullwiki")[0]["trace"] if s["kind"] == "retrieval"]
    assert [s["request"]["retriever"] for s in steps] == ["bm25"]


def test_hotpotqa_fullwiki_over_a_flashrag_corpus_matches_supporting_passages_by_title(tmp_path):
    """FlashRAG's corpus format ({"id", "contents"}: the title, quoted, in the first line): supporting passages
    are matched by the title, and FlashRAG's prompt shows each passage as FlashRAG does."""
    values = fullwiki_over(tmp_path, "varn_corpus_flashrag.jsonl")
    assert values["support_recall"] == pytest.approx(3.5 / 4)  # as over the same corpus with a title field (above)
    first = samples(tmp_path / "run", "hotpotqa_fullwiki")[0]
    assert [doc["title"] for doc in first["prediction"]["docs"]] == ["Ansgar Pell", "Olm"]
    prompt = first["trace"][-1]["request"]["prompt"]
    assert '\nDoc 1(Title: "Ansgar Pell") Ansgar Pell (1751-1820) was a brewer' in prompt


# --- 2WikiMultihopQA ----------------------------------------------------------------------------------
TWOWIKI_RULES = [
    ("founder of Olm born", "Trask"),
    ("founded earlier", "Evermouth was founded earlier"),
    ("same country", "no"),
    ("capital of the island north", "Evermouth"),
]
# em:        1, 0, 0, 1                                                                          -> 2/4
# hotpot_f1: 1, "evermouth was founded earlier" vs "evermouth" 2*(1/4*1)/(1/4+1) = 2/5, 0 ("no" vs
#            "yes"), 1                                                                           -> (2+2/5)/4
# cover_em:  1, 1, 0, 1                                                                          -> 3/4
# vanilla, top_n=2, the file's order:
#   1: {Olm, Ansgar Pell} = gold                     1, 1, 1, 1
#   2: {Trask, Olm} vs {Olm, Evermouth}              1/2, 1/2, 1/2, 0
#   3: {Olm, Evermouth} = gold                       1, 1, 1, 1
#   4: {Kiribati Sound, Varn} = gold                 1, 1, 1, 1
TWOWIKI_SCORES = {
    "em": 2 / 4,
    "hotpot_f1": (2 + 2 / 5) / 4,
    "cover_em": 3 / 4,
    "support_recall": 3.5 / 4,
    "support_precision": 3.5 / 4,
    "support_f1": 3.5 / 4,
    "support_em": 3 / 4,
}


@pytest.mark.parametrize(
    "task,sample",
    [("2wikimultihopqa", "2wiki_dev.json"), ("2wikimultihopqa_flashrag", "2wikimultihopqa_flashrag_dev.jsonl")],
)
def test_2wikimultihopqa_formats(tmp_path, task, sample):
    values = score(tmp_path, task, sample, TWOWIKI_RULES, system="vanilla", system_args={"top_n": 2})
    assert values == pytest.approx(TWOWIKI_SCORES)
    first = samples(tmp_path / "run", task)[0]
    assert first["meta"] == {"type": "compositional"}
    assert first["prediction"]["docs"][0]["text"] == (
        "Olm is a fishing town on the north coast of Varn. It was founded in 1788 by the brewer Ansgar Pell."
    )


# --- MuSiQue ------------------------------------------------------------------------------------------
MUSIQUE_RULES = [
    ("person who founded Olm", "the village of Trask"),
    ("capital of Varn founded", "in 1602"),
    ("known for", "cheese making"),
]
# em:       1 (an alias), 0, 1 (an alias)                                                        -> 2/3
# f1:       1, "in 1602" vs "1602" 2/3, 1                                                         -> (2+2/3)/3
# cover_em: 1, 1, 1                                                                               -> 1
MUSIQUE_ANSWERS = {"em": 2 / 3, "cover_em": 1.0}
MUSIQUE_F1 = (2 + 2 / 3) / 3


def test_musique_release_format(tmp_path):
    # vanilla, top_n=2: paragraphs idx 0 and 1 are shown
    #   1: {0 Varn, 1 Olm} vs supporting {1 Olm, 3 Ansgar Pell}      1/2, 1/2, 1/2, 0
    #   2: {0 Evermouth, 1 Trask} vs {0 Evermouth, 2 Varn}           1/2, 1/2, 1/2, 0
    #   3: {0 Olm, 1 Trask} vs {1 Trask, 3 Ansgar Pell}              1/2, 1/2, 1/2, 0
    values = score(
        tmp_path, "musique", "musique_ans_v1.0_dev.jsonl", MUSIQUE_RULES, system="vanilla", system_args={"top_n": 2}
    )
    assert values == pytest.approx(
        {
            **MUSIQUE_ANSWERS,
            "f1": MUSIQUE_F1,
            "support_recall": 1 / 2,
            "support_precision": 1 / 2,
            "support_f1": 1 / 2,
            "support_em": 0.0,
        }
    )
    first = samples(tmp_path / "run", "musique")[0]
    assert [doc["id"] for doc in first["prediction"]["docs"]] == ["0", "1"]
    assert "is_supporting" not in json.dumps(first["prediction"]["docs"])  # the gold stays out of the documents
    run_config = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert {"name": "f1", "normalize": "squad", "empty_agree": True} in run_config["config"]["metric_configs"][
        "musique"
    ]


def test_musique_flashrag_format(tmp_path):
    # supporting passages: the titles of the decomposition's support paragraphs
    #   1: {Olm, Ansgar Pell} = gold {Olm, Ansgar Pell}                           1, 1, 1, 1
    #   2: {Evermouth, Olm} vs {Varn, Evermouth}                                   1/2, 1/2, 1/2, 0
    #   3: {Trask, Varn, Olm, Kiribati Sound} vs {Ansgar Pell, Trask}              1/2, 1/4, 2*(1/8)/(3/4) = 1/3, 0
    docs = [["Olm", "Ansgar Pell"], ["Evermouth", "Olm"], ["Trask", "Varn", "Olm", "Kiribati Sound"]]
    outputs = ["the village of Trask", "in 1602", "cheese making"]
    predictions = [
        {"id": i, "output": o, "docs": [{"title": t, "text": "..."} for t in d]}
        for i, o, d in zip(["2hop__101_202", "2hop__103_204", "2hop__105_206"], outputs, docs)
    ]
    values = score(tmp_path, "musique_flashrag", "musique_flashrag_dev.jsonl", predictions=predictions)
    assert values == pytest.approx(
        {
            **MUSIQUE_ANSWERS,
            "hotpot_f1": MUSIQUE_F1,
            "support_recall": 2 / 3,
            "support_precision": (1 + 1 / 2 + 1 / 4) / 3,
            "support_f1": (1 + 1 / 2 + 1 / 3) / 3,
            "support_em": 1 / 3,
        }
    )


# --- the prompt and the catalogue ----------------------------------------------------------------------
def test_the_flashrag_prompt_with_and_without_documents(tmp_path):
    score(
        tmp_path,
        "hotpotqa_distractor",
        "hotpot_dev_distractor_v1.json",
        HOTPOT_RULES,
        system="vanilla",
        system_args={"top_n": 2},
    )
    with_docs = samples(tmp_path / "run", "hotpotqa_distractor")[0]["trace"][-1]["request"]["prompt"]
    # flashrag/prompt/base_prompt.py: system prompt (reference lines) + "\n\n" + user prompt
    assert with_docs == (
        "Answer the question based on the given document.Only give me the answer and do not output any other words.\n"
        "The following are given documents.\n\n"
        "Doc 1(Title: Olm) Olm is a fishing town on the north coast of Varn. It was founded in 1788 by the brewer "
        "Ansgar Pell.\n"
        "Doc 2(Title: Varn) Varn is an island of forty-one lakes. Its capital is the port city of Evermouth.\n"
        "\n\nQuestion: Which village was the founder of Olm born in?"
    )
    (tmp_path / "closed").mkdir()
    score(tmp_path / "closed", "nq_open", "NQ-open.dev.jsonl", NQ_RULES)
    closed = samples(tmp_path / "closed" / "run", "nq_open")[0]["trace"][-1]["request"]["prompt"]
    assert closed == (
        "Answer the question based on your own knowledge. Only give me the answer and do not output "
        "any other words.\n\nQuestion: who founded the fishing town of olm"
    )


def test_a_passage_whose_title_is_its_first_line_is_shown_as_flashrag_shows_it():
    from ragbench.api import Document
    from ragbench.api.flashrag import flashrag_reference as reference

    # FlashRAG's corpora keep the title in the first line of `contents`; format_reference splits it off as
    # written. A passage read by ragbench carries that line (when it is not the title) in its metadata; one
    # indexed with its title still in the text (by ragbench before it split `contents`) is split here.
    docs = [
        Document(id="1", title="Olm", text="Olm is a town.", metadata={"title_line": '"Olm"'}),
        Document(id="2", title="", text='"Olm"\nOlm is a town.'),
        Document(id="3", title="Varn", text="An island."),
        Document(id="4", title="", text="A passage without a title.", metadata={"title_line": ""}),
    ]
    assert reference(docs) == (
        'Doc 1(Title: "Olm") Olm is a town.\nDoc 2(Title: "Olm") Olm is a town.\n'
        "Doc 3(Title: Varn) An island.\nDoc 4(Title: ) A passage without a title.\n"
    )


def test_every_open_qa_task_is_in_the_catalogue_with_its_group():
    registry = Registry.discover()
    for name in SHIPPED:
        assert registry.expand_tasks([name]) == [name]
    assert set(registry.expand_tasks(["multihop_qa"])) == {
        "hotpotqa_distractor",
        "hotpotqa_fullwiki",
        "2wikimultihopqa",
        "musique",
        "fictional_multihop",
    }


def tasks_scored_here() -> set[str]:
    """The tasks this file's tests run, read from its source (tests run in any order, on any worker): a
    `score(tmp_path, TASK, ...)` call's task, a parametrized case's first value, a `run(..., tasks=[...])`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(Path(__file__).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("score", "run"):
            values = node.args[1:2] + [
                item
                for keyword in node.keywords
                if keyword.arg == "tasks" and isinstance(keyword.value, ast.List)
                for item in keyword.value.elts
            ]
        elif isinstance(node, ast.Tuple):
            values = node.elts[:1]
        else:
            continue
        found.update(value.value for value in values if isinstance(value, ast.Constant))
    return found


def test_every_shipped_task_is_scored_by_a_test_here():
    assert set(SHIPPED) <= tasks_scored_here()
