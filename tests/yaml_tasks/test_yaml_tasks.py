"""YAML tasks (docs/yaml-tasks.md): the documented example runs end to end, every local format loads,
the field mapping fills each gold kind and document shape, and a mistake in the file is one line naming
the file, the line and the key."""

from __future__ import annotations

import bz2
import contextlib
import csv
import functools
import gzip
import json
import re
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, write_jsonl
from ragbench.api import ConfigError, Example, RecordError
from ragbench.api.yaml_tasks import yaml_task_class
from ragbench.testing import PreflightError, Registry, installed_registry, preflight
from support.helpers import cli_here, run, samples, task_counts

FLASHRAG = [
    {
        "id": "dev_0",
        "question": "Which river flows through Paris?",
        "golden_answers": ["Seine", "the Seine"],
        "metadata": {
            "type": "bridge",
            "passages": [
                {"title": "Paris", "text": "Paris lies on the Seine."},
                {"title": "Lyon", "text": "Lyon lies on the Rhone."},
            ],
        },
    },
    {
        "id": "dev_1",
        "question": "Which river flows through Lyon?",
        "golden_answers": ["Rhone"],
        "metadata": {"type": "bridge", "passages": [{"title": "Lyon", "text": "Lyon lies on the Rhone."}]},
    },
    {
        "id": "dev_2",
        "question": "Who wrote Hamlet?",
        "golden_answers": ["William Shakespeare", "Shakespeare"],
        "metadata": {
            "type": "comparison",
            "passages": [{"title": "Hamlet", "text": "Hamlet is a play by Shakespeare."}],
        },
    },
]


def documented_example() -> str:
    """The complete example of docs/yaml-tasks.md, as a user would copy it."""
    page = (ROOT / "docs" / "yaml-tasks.md").read_text(encoding="utf-8")
    return re.search(r"## A complete example\n\n```yaml\n(.*?)^```", page, re.M | re.S).group(1)


def write_records(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(path, records)


def write_task(folder: Path, text: str, name: str = "task.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def spec_task(folder: Path, text: str, **options):
    registry = installed_registry()
    path = write_task(folder, text)
    return yaml_task_class(path, formats=registry.record_format, gold_kinds=registry.gold_kind)(**options)


@pytest.fixture
def documented_task(tmp_path) -> Path:
    write_records(tmp_path / "data" / "my_qa.jsonl", FLASHRAG)
    return write_task(tmp_path, documented_example(), "my_qa.yaml")


def test_the_documented_example_runs_end_to_end_with_its_prompt_filters_and_metrics(tmp_path, documented_task):
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {"pattern": "through Paris", "response": "  Seine\nbecause of the map"},
                {"pattern": "through Lyon", "response": "the Saone"},
                {"response": " Shakespeare "},
            ]
        )
    )
    results = run(tmp_path, tasks=[str(documented_task)], model=f"scripted:{rules}")
    assert results["counts"]["my_qa"] == task_counts(3, 3)
    # hand-worked: em 1, 0, 1; token F1 1, 0 (the Saone vs Rhone), 1; normalised match 1, 0, 1
    assert results["results"]["my_qa"] == pytest.approx({"em": 2 / 3, "f1": 2 / 3, "match_normalized": 2 / 3})
    assert results["details"]["my_qa"]["em"]["slices"]["type"]["bridge"]["value"] == 0.5
    first = samples(tmp_path / "run", "my_qa")[0]
    assert first["prediction"]["answer"] == "Seine"  # strip, then first_line
    assert first["trace"][-1]["request"]["prompt"] == (
        "[1] Paris: Paris lies on the Seine.\nAnswer the question in a few words.\n"
        "Question: Which river flows through Paris?\nAnswer:"
    )  # vanilla shows its top_n=1 document
    assert first["trace"][-1]["request"]["sampling"]["max_tokens"] == 32  # system_args of the file
    assert first["gold"] == {"answers": ["Seine", "the Seine"]} and first["meta"] == {"type": "bridge"}


@pytest.mark.parametrize("system", ["closed_book", "vanilla", "llatrieval", "selfrag", "smart"])
def test_every_system_runs_on_a_yaml_task(tmp_path, documented_task, system):
    args = {"selfrag": {"mode": "no_retrieval"}, "smart": {"mode": "prompted"}}.get(system, {})
    results = run(tmp_path, tasks=[str(documented_task)], system=system, system_args=args, model="scripted:echo")
    assert results["counts"]["my_qa"]["scored"] == 3, results.get("failures")


def test_a_task_file_records_its_path_and_digest_in_the_run_config(tmp_path, documented_task):
    run(tmp_path, tasks=[str(documented_task)], model="scripted:echo")
    config = json.loads((tmp_path / "run" / "results.json").read_text())["config"]
    assert config["tasks"] == ["my_qa"]
    task = config["task_configs"]["my_qa"]
    assert task["yaml"] == str(documented_task) and len(task["yaml_sha256"]) == 64


# --- formats ----------------------------------------------------------------------------------------
PLAIN = [{"id": "a", "question": "Q1?", "answer": "x"}, {"id": "b", "question": "Q2?", "answer": "y"}]


def _jsonl(path: Path, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in PLAIN))
    return path


def _json(path: Path, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as handle:
        json.dump({"version": 1, "data": PLAIN}, handle)
    return path


def _csv(path: Path, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["id", "question", "answer"])
        writer.writeheader()
        writer.writerows(PLAIN)
    return path


@pytest.mark.parametrize(
    "name,write,opener",
    [
        ("data.jsonl", _jsonl, open),
        ("data.jsonl.gz", _jsonl, gzip.open),
        ("data.jsonl.bz2", _jsonl, bz2.open),
        ("data.json", _json, open),
        ("data.json.gz", _json, gzip.open),
        ("data.json.bz2", _json, bz2.open),
        ("data.csv", _csv, open),
        ("data.csv.gz", _csv, gzip.open),
        ("data.csv.bz2", _csv, bz2.open),
    ],
)
def test_each_local_format_loads(tmp_path, name, write, opener):
    write(tmp_path / name, opener)
    records = ", records: data" if ".json" in name and ".jsonl" not in name else ""
    task = spec_task(
        tmp_path, f"task: t\ndata: {{path: {name}{records}}}\nfields: {{gold: {{answers: answer}}}}\nmetrics: [em]\n"
    )
    examples = list(task.examples())
    assert [(e.id, e.question, e.gold) for e in examples] == [
        ("a", "Q1?", {"answers": ["x"]}),
        ("b", "Q2?", {"answers": ["y"]}),
    ]


def test_a_json_file_of_json_lines_is_read_as_lines(tmp_path):
    _jsonl(tmp_path / "data.json")
    task = spec_task(tmp_path, "task: t\ndata: {path: data.json}\nfields: {gold: {answers: answer}}\nmetrics: [em]\n")
    assert [e.id for e in task.examples()] == ["a", "b"]


def test_a_bad_jsonl_line_is_a_counted_bad_record_naming_file_and_line(tmp_path):
    write_jsonl(tmp_path / "data.jsonl", [PLAIN[0], "{cut", PLAIN[1], {"id": "c", "answer": "z"}])
    task = spec_task(tmp_path, "task: t\ndata: {path: data.jsonl}\nfields: {gold: {answers: answer}}\nmetrics: [em]\n")
    items = list(task.examples())
    assert [type(i).__name__ for i in items] == ["Example", "RecordError", "Example", "FieldError"]
    assert str(items[1]).startswith(f"{tmp_path / 'data.jsonl'}:2: ")
    assert str(items[3]) == f"{tmp_path / 'data.jsonl'}:4 field 'question': missing field"


# Where a bad record is: the line of a CSV row (here after a question that spans two lines) and of a JSON
# Lines record (here after a blank line); the path in a JSON document, indexed from 0.
BAD_SECOND_RECORD = [
    ("d.csv", 'id,question,answer\na,"Two\nlines?",x\nb,Short row?\n', "", ":4"),
    ("d.jsonl", '{"id": "a", "question": "Q1?", "answer": "x"}\n\n{"id": "b", "question": "Q2?"}\n', "", ":3"),
    ("d.json", json.dumps({"data": [PLAIN[0], {"id": "b", "question": "Q2?"}]}), ", records: data", " data[1]"),
    ("d.json", json.dumps([PLAIN[0], {"id": "b", "question": "Q2?"}]), "", " [1]"),
]


@pytest.mark.parametrize(
    "name,text,records,where", BAD_SECOND_RECORD, ids=["csv", "jsonl", "json_records", "json_list"]
)
def test_a_bad_record_is_named_by_its_file_line_or_its_path_in_the_document(tmp_path, name, text, records, where):
    (tmp_path / name).write_text(text, encoding="utf-8")
    task = spec_task(
        tmp_path, f"task: t\ndata: {{path: {name}{records}}}\nfields: {{gold: {{answers: answer}}}}\nmetrics: [em]\n"
    )
    good, bad = task.examples()
    assert good.id == "a" and str(bad) == f"{tmp_path / name}{where} field 'answer': missing field"


def test_the_pre_flight_names_a_record_in_a_json_document_by_its_path(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"data": [{"id": "a", "question": "Q?"}]}), encoding="utf-8")
    path = write_task(
        tmp_path, "task: t\ndata: {path: d.json, records: data}\nfields: {gold: {answers: answer}}\nmetrics: [em]\n"
    )
    with pytest.raises(ConfigError) as error:
        yaml_task_class(path)().try_first_records()
    assert str(error.value) == (
        f"{path}:3: key 'fields.gold.answers': {tmp_path / 'd.json'} data[0] has no field "
        "'answer' (its fields: id, question)"
    )


def test_flashrag_format_maps_its_schema_by_default(tmp_path):
    write_jsonl(tmp_path / "dev.jsonl", FLASHRAG)
    task = spec_task(tmp_path, "task: t\ndata: {path: dev.jsonl, format: flashrag}\nmetrics: [em]\n")
    first = next(iter(task.examples()))
    assert (first.id, first.question, first.gold) == (
        "dev_0",
        FLASHRAG[0]["question"],
        {"answers": ["Seine", "the Seine"]},
    )
    assert task.scoring.gold_fields == ("answers",)


def test_flashrag_multiple_choice_golds_become_the_chosen_texts(tmp_path):
    record = {
        "id": "mc",
        "question": "Pick the metal.",
        "golden_answers": [2],
        "choices": ["wood", "glass", "iron"],
        "metadata": {},
    }
    write_jsonl(tmp_path / "dev.jsonl", [record])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: dev.jsonl, format: flashrag}\nanswer_format: choice\n"
        "fields:\n  gold:\n    answers: golden_answers\n"
        "    choices: {texts: choices, answer_index: golden_answer_indexes.0}\n"
        "metrics: [em, choice_accuracy]\n",
    )
    example = next(iter(task.examples()))
    assert example.gold == {
        "answers": ["iron"],
        "answer_key": "C",
        "choices": {"label": ["A", "B", "C"], "text": ["wood", "glass", "iron"]},
    }


def test_squad_format_gives_one_record_per_question(tmp_path):
    dev = {
        "version": "1.1",
        "data": [
            {
                "title": "Tide_mills",
                "paragraphs": [
                    {
                        "context": "Tide mills turn with the tide.",
                        "qas": [
                            {
                                "id": "b1",
                                "question": "What turns tide mills?",
                                "answers": [{"answer_start": 17, "text": "the tide"}],
                            }
                        ],
                    }
                ],
            }
        ],
    }
    (tmp_path / "dev.json.bz2").write_bytes(bz2.compress(json.dumps(dev).encode()))
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: dev.json.bz2, format: squad}\n"
        "fields: {gold: {answers: answers}, documents: {path: passages}, meta: {title: title}}\n"
        "metrics: [match]\n",
    )
    (example,) = task.examples()
    assert (example.id, example.gold, example.meta) == ("b1", {"answers": ["the tide"]}, {"title": "Tide_mills"})
    assert [(d.id, d.title, d.text) for d in example.docs] == [
        ("b1:context", "Tide mills", "Tide mills turn with the tide.")
    ]


# --- field mapping ----------------------------------------------------------------------------------
HOTPOT = {
    "_id": "5a8b",
    "question": "Which magazine was started first?",
    "answer": "Arthur's Magazine",
    "type": "comparison",
    "level": "medium",
    "supporting_facts": [["Arthur's Magazine", 0], ["First for Women", 0]],
    "context": [
        ["Arthur's Magazine", ["Arthur's Magazine (1844-1846) was a periodical.", " It was edited by T.S. Arthur."]],
        ["First for Women", ["First for Women is a woman's magazine.", " It was started in 1989."]],
    ],
}
HOTPOT_TASK = """task: hotpot
data: {path: hotpot.json}
fields:
  id: _id
  gold: {answers: answer}
  extra_gold: {supporting_facts: supporting_facts}
  documents: {path: context, shape: sentences}
  slices: {type: type, level: level}
metrics: [em, f1]
"""


def test_hotpotqa_sentences_become_documents_and_supporting_facts_extra_gold(tmp_path):
    (tmp_path / "hotpot.json").write_text(json.dumps([HOTPOT]))
    task = spec_task(tmp_path, HOTPOT_TASK)
    (example,) = task.examples()
    assert example.id == "5a8b" and example.meta == {"type": "comparison", "level": "medium"}
    assert [(d.id, d.title, d.text) for d in example.docs] == [
        (
            "5a8b:0",
            "Arthur's Magazine",
            "Arthur's Magazine (1844-1846) was a periodical. It was edited by T.S. Arthur.",
        ),
        ("5a8b:1", "First for Women", "First for Women is a woman's magazine. It was started in 1989."),
    ]
    assert example.gold["supporting_facts"] == HOTPOT["supporting_facts"]
    assert task.scoring.gold_fields == ("answers", "supporting_facts") and task.scoring.slice_fields == (
        "type",
        "level",
    )


@pytest.mark.parametrize(
    "shape,documents,mapping,ids",
    [
        ("pairs", [["T1", "one"], ["T2", "two"]], "{path: docs, shape: pairs}", ["q1:0", "q1:1"]),
        (
            "columns",
            {"title": ["T1", "T2"], "sentences": [["o", "ne"], ["two"]]},
            "{path: docs, shape: columns}",
            ["q1:0", "q1:1"],
        ),
        (
            "dicts",
            [{"name": "T1", "body": "one", "pid": 7, "rank": "2.5", "gold": True}, {"name": "T2", "body": "two"}],
            "{path: docs, title: name, text: body, id: pid, score: rank, metadata: [gold]}",
            ["7", "q1:1"],
        ),
    ],
)
def test_document_shapes(tmp_path, shape, documents, mapping, ids):
    write_jsonl(tmp_path / "d.jsonl", [{"id": "q1", "question": "q", "a": "x", "docs": documents}])
    task = spec_task(
        tmp_path,
        f"task: t\ndata: {{path: d.jsonl}}\nfields: {{gold: {{answers: a}}, documents: {mapping}}}\nmetrics: [em]\n",
    )
    (example,) = task.examples()
    assert [(d.title, d.text) for d in example.docs] == [("T1", "one"), ("T2", "two")]
    assert [d.id for d in example.docs] == ids  # a document without an id: <example id>:<position>
    if shape == "dicts":
        assert (example.docs[0].id, example.docs[0].score, example.docs[0].metadata) == ("7", 2.5, {"gold": True})


def test_path_forms_first_of_all_of_and_optional(tmp_path):
    write_jsonl(
        tmp_path / "d.jsonl",
        [{"q": "one", "answer": "A", "aliases": ["a1", "a2"]}, {"q": "two", "answers": ["B"], "verdict": "SUPPORTS"}],
    )
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\nfields:\n  question: q\n  gold:\n"
        "    answers: [answers, answer]\n    label: {path: verdict, optional: true}\n"
        "  extra_gold: {every: {all_of: [answer, aliases, answers]}}\nmetrics: [em]\n",
    )
    first, second = task.examples()
    assert first.gold == {"answers": ["A"], "every": ["A", "a1", "a2"]}
    assert second.gold == {"answers": ["B"], "label": "SUPPORTS", "every": ["B"]}
    assert first.id == "0" and second.id == "1"  # no id field: the record's position


def test_gold_kinds_fill_the_keys_metrics_read(tmp_path):
    record = {
        "question": "q",
        "pairs": [{"question": "sub", "short_answers": ["s"]}],
        "long": "A long answer.",
        "claims": ["c1", 2],
        "ans": "yes",
        "alts": ["y"],
    }
    write_jsonl(tmp_path / "d.jsonl", [record])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\nfields:\n  gold:\n    qa_pairs: pairs\n"
        "    long_answer: long\n    claims: claims\n    crag_answer: {answer: ans, alt_ans: alts}\n"
        "metrics: [str_em]\n",
    )
    (example,) = task.examples()
    assert example.gold == {"qa_pairs": record["pairs"], "answer": "yes", "claims": ["c1", "2"], "alt_ans": ["y"]}
    assert task.scoring.gold_fields == ("qa_pairs", "long_answer", "claims", "crag_answer")


@pytest.mark.parametrize(
    "gold,kinds,references",
    [
        ("{answers: a}", ("answers",), ["x", "y"]),
        ("{label: v}", ("label",), ["SUPPORTS"]),
        ("{long_answer: long, qa_pairs: pairs}", ("qa_pairs", "long_answer"), ["A long answer."]),
        ("{qa_pairs: pairs}", ("qa_pairs",), ["s1", "s2"]),
        ("{answer_lists: lists}", ("answer_lists",), ["Paris, Lyon"]),
        ("{crag_answer: {answer: long, alt_ans: a}}", ("crag_answer",), ["A long answer.", "x", "y"]),
    ],
)
def test_gold_references_read_the_declared_gold(tmp_path, gold, kinds, references):
    record = {
        "question": "q",
        "a": ["x", "y"],
        "v": "SUPPORTS",
        "long": "A long answer.",
        "pairs": [{"question": "s", "short_answers": ["s1", "s2"]}],
        "lists": [["Paris", "City of Light"], ["Lyon"]],
    }
    write_jsonl(tmp_path / "d.jsonl", [record])
    task = spec_task(tmp_path, f"task: t\ndata: {{path: d.jsonl}}\nfields: {{gold: {gold}}}\nmetrics: [em]\n")
    (example,) = task.examples()
    assert task.scoring.gold_fields == kinds and task.gold_references(example.gold) == references


def test_inputs_and_choices_reach_the_template_and_query(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "Pick one.", "opts": ["red", "blue"], "key": "B", "hint": "sky"}])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\nanswer_format: choice\nfields:\n  gold:\n"
        "    choices: {texts: opts, answer_key: key}\n  inputs: {hint: hint}\n"
        'prompt:\n  template: "{{ question }} ({{ hint }}){% for c in choices %} {{ c.label }}) '
        "{{ c.text }}{% endfor %}\"\n  query: \"{{ question }} {{ choices|map(attribute='text')|join('/') }}\"\n"
        "  system: Answer with a letter.\n  demonstration: {question: Pick red., answer: A}\n"
        "postprocess: [{regex: '\\b([A-D])\\b'}]\nmetrics: [choice_accuracy]\n",
    )
    (example,) = task.examples()
    assert task.prompting.build_prompt(example) == "Pick one. (sky) A) red B) blue"
    assert task.prompting.query_text(example) == "Pick one. red/blue"
    assert task.prompting.chat_messages("p")[0] == {"role": "system", "content": "Answer with a letter."}
    assert task.demonstration() == ("Pick red.", "A")
    assert task.prompting.postprocess("The answer is B, surely") == "B"


def test_a_citing_task_parses_the_citations_of_each_sentence(tmp_path):
    pytest.importorskip("punkt")
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "a": "x"}])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\ncites: true\nanswer_format: long\n"
        "fields: {gold: {long_answer: a}}\nmetrics: [citation]\n",
    )
    assert task.prompting.citations("Paris is big [1][3]. It is old [2].") == [[1, 3], [2]]
    assert task.scoring.gold_fields == ("long_answer",) and task.prompting.cites


@pytest.mark.parametrize(
    "filters,raw,answer",
    [
        ("[strip]", "  x  ", "x"),
        ("[first_line]", "a\nb", "a"),
        ("[lower, strip]", " AbC ", "abc"),
        ('[{before: "\\n\\n"}, {remove: "</s>"}, {remove_prefix: " "}]', "  ans</s>\n\nmore", " ans"),
        ('[{regex: {pattern: "answer: (\\\\w+)", fallback: none}}]', "no match", "none"),
        ('[{regex: "\\\\d+"}]', "it is 42 or 43", "42"),
    ],
)
def test_postprocess_filters(tmp_path, filters, raw, answer):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "a": "x"}])
    task = spec_task(
        tmp_path,
        f"task: t\ndata: {{path: d.jsonl}}\nfields: {{gold: {{answers: a}}}}\npostprocess: {filters}\nmetrics: [em]\n",
    )
    assert task.prompting.postprocess(raw) == answer


def test_metric_options_of_the_file_reach_the_metric(tmp_path, documented_task):
    text = documented_task.read_text().replace(
        "metrics: [em, f1, {name: match_normalized}]", "metrics: [em, {name: hf:exact_match, args: {nonsense: 1}}]"
    )
    documented_task.write_text(text)
    with pytest.raises(ConfigError, match="nonsense"):
        run(tmp_path, tasks=[str(documented_task)], model="scripted:echo")


def test_nothing_from_a_record_is_run_as_code(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "{{ 7 * 7 }} {% for x in range(3) %}x{% endfor %}", "a": "x"}])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\nfields: {gold: {answers: a}}\n"
        "prompt: {template: 'Q: {{ question }}'}\nmetrics: [em]\n",
    )
    (example,) = task.examples()
    assert task.prompting.build_prompt(example) == "Q: {{ 7 * 7 }} {% for x in range(3) %}x{% endfor %}"


def test_the_sandbox_refuses_reaching_python_internals(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "a": "x"}])
    task = spec_task(
        tmp_path,
        "task: t\ndata: {path: d.jsonl}\nfields: {gold: {answers: a}}\n"
        "prompt: {template: '{{ question.__class__.__mro__ }}'}\nmetrics: [em]\n",
    )
    (example,) = task.examples()
    with pytest.raises(ValueError, match=r"task.yaml:4: key 'prompt.template': cannot render"):
        task.prompting.build_prompt(example)


# --- one-line errors ------------------------------------------------------------------------------------
GOOD = "task: t\ndata: {path: d.jsonl}\nfields:\n  gold: {answers: a}\nprompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n"


@pytest.mark.parametrize(
    "text,message",
    [
        (
            GOOD.replace("gold: {answers: a}", "gold: {answer: a}"),
            "task.yaml:4: key 'fields.gold.answer': unknown key; did you mean 'answers'?",
        ),
        (
            GOOD.replace("metrics: [em]", "metrics: [em]\nmetric: [f1]"),
            "task.yaml:8: key 'metric': unknown key; did you mean 'metrics'?",
        ),
        (
            GOOD.replace("{{ question }}", "{{ questoin }}"),
            "task.yaml:6: key 'prompt.template': 'questoin' is undefined; did you mean 'question'?",
        ),
        (
            GOOD.replace("{{ question }}", "{{ question }"),
            "task.yaml:6: key 'prompt.template': template line 1: unexpected '}'",
        ),
        (GOOD.replace("gold: {answers: a}", "gold: {answers: a"), "task.yaml:5: not valid YAML"),
        (
            GOOD.replace("metrics: [em]", "metrics: !function utils.metrics"),
            "task.yaml:7: the tag '!function' is not allowed",
        ),
        (GOOD.replace("task: t\n", ""), "task.yaml:1: key 'task' is required"),
        (
            GOOD.replace("metrics: [em]", "metrics: [em]\npostprocess: [strip, first_lines]"),
            "task.yaml:8: key 'postprocess[2]': unknown filter 'first_lines'; did you mean 'first_line'?",
        ),
        (
            GOOD.replace("data: {path: d.jsonl}", "data: {path: d.jsonl, format: jsonlines}"),
            "task.yaml:2: key 'data.format': record format 'jsonlines' is not installed; the installed ones are "
            "flashrag, squad, webquestions",
        ),
        (
            GOOD.replace("fields:\n", "fields:\n  question: q\n  question: r\n"),
            "task.yaml:5: key 'question' is given twice",
        ),
        (
            GOOD.replace("fields:\n", "fields:\n  inputs: {docs: passages}\n"),
            "task.yaml:4: key 'fields.inputs.docs': 'docs' is a template variable of every task",
        ),
        # a path written as null is no path (it was read as one, and the task failed on it later)
        (
            GOOD.replace("fields:\n", "fields:\n  id: null\n"),
            "task.yaml:4: key 'fields.id': expected a path (keys joined by dots) or a list of paths",
        ),
        (
            GOOD.replace("fields:\n", "fields:\n  meta: {topic: null}\n"),
            "task.yaml:4: key 'fields.meta.topic': expected a path (keys joined by dots) or a list of paths",
        ),
        (
            GOOD.replace("fields:\n", "fields:\n  documents: {path: null}\n"),
            "task.yaml:4: key 'fields.documents': 'path' is required (the path to the list of documents in a record)",
        ),
    ],
)
def test_a_mistake_in_the_file_is_one_line_naming_file_line_and_key(tmp_path, text, message):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "a": "x"}])
    with pytest.raises(ConfigError) as error:
        registry = installed_registry()
        yaml_task_class(write_task(tmp_path, text), formats=registry.record_format, gold_kinds=registry.gold_kind)
    assert str(error.value).startswith(f"{tmp_path}/{message}") and "\n" not in str(error.value)


def test_a_field_the_records_lack_is_named_with_its_yaml_key_before_the_run(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "golden_answers": ["x"], "id": 1}] * 3)
    path = write_task(tmp_path, GOOD.replace("gold: {answers: a}", "gold: {answers: golden_answer}"))
    result = cli_here(
        "check", "--tasks", str(path), "--system", "closed_book", "--model", "scripted:echo", "--no-model"
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"ragbench: error: {path}:4: key 'fields.gold.answers': {tmp_path / 'd.jsonl'}:1 "
        "has no field 'golden_answer' (its fields: question, golden_answers, id); "
        "did you mean 'golden_answers'?"
    )


def test_a_template_that_fails_on_the_records_is_named_before_the_run(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "a": "x"}])
    path = write_task(tmp_path, GOOD.replace("{{ question }}", "{{ question.upper(1) }}"))
    result = cli_here(
        "--tasks", str(path), "--system", "closed_book", "--model", "scripted:echo", "--output", str(tmp_path / "r")
    )
    assert result.returncode == 2 and not (tmp_path / "r").exists()
    assert result.stderr.startswith(f"ragbench: error: {path}:6: key 'prompt.template': cannot render:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_task_without_data_asks_for_data(tmp_path):
    path = write_task(tmp_path, GOOD.replace("data: {path: d.jsonl}\n", ""))
    with pytest.raises(ConfigError, match=r"names no data; pass --data t=PATH"):
        run(tmp_path, tasks=[str(path)], system="closed_book", model="scripted:echo")
    write_jsonl(tmp_path / "elsewhere.jsonl", [{"question": "q", "a": "x"}])
    results = run(
        tmp_path,
        "run2",
        tasks=[str(path)],
        data={"t": str(tmp_path / "elsewhere.jsonl")},
        system="closed_book",
        model="scripted:echo",
    )
    assert results["counts"]["t"]["scored"] == 1


# --- discovery ---------------------------------------------------------------------------------------------
def test_include_path_runs_tasks_and_groups_by_name_and_lists_them(tmp_path):
    folder = tmp_path / "my_tasks"
    write_records(folder / "d.jsonl", [{"question": "q", "a": "x"}])
    write_task(
        folder,
        GOOD.replace("task: t", "task: first_set\ngroups: [mine]").replace("d.jsonl", "../d.jsonl"),
        "a/first.yaml",
    )
    write_task(
        folder,
        GOOD.replace("task: t", "task: second_set\ngroups: [mine]").replace("d.jsonl", "../d.jsonl"),
        "b/second.yml",
    )
    write_task(folder, "settings: {not: a task}\n", "shared.yaml")
    result = cli_here(
        "--tasks",
        "mine",
        "--include-path",
        str(folder),
        "--system",
        "closed_book",
        "--model",
        "scripted:echo",
        "--no-progress",
        "--output",
        str(tmp_path / "r"),
    )
    assert result.returncode == 0, result.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert set(results["results"]) == {"first_set", "second_set"}
    listing = cli_here("list", "tasks", "--include-path", str(folder))
    assert re.search(r"first_set .*\[.*first\.yaml\]", listing.stdout) and "second_set" in listing.stdout


def test_a_task_file_cannot_take_an_installed_task_name(tmp_path):
    path = write_task(tmp_path, GOOD.replace("task: t", "task: popqa"))
    with pytest.raises(ConfigError, match=r"task 'popqa' is already provided by ragbench"):
        Registry.discover().add_task_file(str(path))


def test_two_task_files_declaring_one_task_name_are_refused_not_one_dropped(tmp_path):
    first, second = write_task(tmp_path, GOOD, "first.yaml"), write_task(tmp_path, GOOD, "second.yaml")
    registry = Registry.discover()
    once_twice = [str(first), str(tmp_path / "." / "first.yaml")]  # one file, named twice
    registry.add_task_files(once_twice)
    assert registry.expand_tasks(once_twice) == ["t"]
    registry.add_task_files([str(first), str(second)])
    with pytest.raises(ConfigError, match=r"--tasks .*second\.yaml: declares task 't', as .*first\.yaml does"):
        registry.expand_tasks([str(first), str(second)])


def test_a_lookup_leaves_the_registry_as_it_was(tmp_path):
    """Only registering adds a task file: looking one up, registered or not, changes nothing."""
    path = write_task(tmp_path, GOOD)
    registry = Registry.discover()

    def state() -> tuple:
        return (dict(registry.entries["tasks"]), dict(registry.aliases["tasks"]), dict(registry.task_files))

    before = state()
    with pytest.raises(ConfigError, match=r"task file .*\.yaml is not registered"):
        registry.entry("tasks", str(path))
    with pytest.raises(ConfigError, match=r"is not registered"):
        registry.expand_tasks([str(path)])
    assert state() == before and "t" not in registry.entries["tasks"]
    registry.add_task_files([str(path)])
    registered = state()
    assert registry.entry("tasks", str(path)).name == "t" and registry.expand_tasks([str(path)]) == ["t"]
    assert registry.entry("tasks", "t").name == "t" and state() == registered


def test_data_keys_that_are_task_files_are_registered_as_planning_checks_them(tmp_path):
    """`--data FILE.yaml=PATH`: the run's file is found by its path; a file not there is one line, said once; one
    not among --tasks is named so."""
    task = write_task(tmp_path, GOOD)
    write_jsonl(tmp_path / "d.jsonl", [{"id": "1", "question": "q?", "a": ["x"]}])
    other = write_task(tmp_path, GOOD.replace("task: t", "task: u"), "other.yaml")

    def problems(data: dict[str, str]) -> list[str]:
        """Every problem the run's pre-flight finds (none: it passes)."""
        try:
            preflight(str(task), "closed_book", data=data)
        except PreflightError as refused:
            return refused.problems
        return []

    assert problems({str(task): str(tmp_path / "d.jsonl")}) == []
    assert problems({str(tmp_path / "gone.yaml"): "d.jsonl"}) == [f"--tasks {tmp_path / 'gone.yaml'}: no such file"]
    assert problems({str(other): "d.jsonl"}) == [f"--data {other}=...: task '{other}' is not among --tasks"]


@functools.cache
def looked_up() -> Registry:
    return Registry.discover()


@pytest.fixture(scope="module")
def unregistered_file(tmp_path_factory) -> str:
    return str(write_task(tmp_path_factory.mktemp("unregistered"), GOOD))


A_FILE = "<a task file on disk, not registered>"


@given(
    st.one_of(
        st.sampled_from(["demo", "arc", "selfrag_suite", "kilt", "nope", A_FILE]),
        st.text(max_size=12).map(lambda name: name + ".yaml"),
    )
)
def test_no_lookup_changes_the_registry(unregistered_file: str, name: str):
    """Any name, a task's, an alias, a group, unknown or a file path (one on disk, one that cannot exist), is
    found or refused with a ConfigError, and the registry is as it was."""
    name = unregistered_file if name == A_FILE else name
    registry = looked_up()

    def state() -> tuple:
        return dict(registry.entries["tasks"]), dict(registry.aliases["tasks"]), dict(registry.task_files)

    before = state()
    with contextlib.suppress(ConfigError):
        registry.entry("tasks", name)
    with contextlib.suppress(ConfigError):
        registry.expand_tasks([name])
    assert state() == before


def test_the_builtin_selfrag_tasks_are_yaml_catalogue_entries():
    registry = Registry.discover()
    for name in ("popqa", "pubhealth", "arc_challenge", "squad", "demo"):
        entry = registry.entry("tasks", name)
        assert entry.target == f"ragbench.tasks.selfrag:{name}.yaml" and entry.build is not None
    assert registry.entry("tasks", "arc").name == "arc_challenge"
    assert registry.load("tasks", "pubhealth").scoring.gold_fields == ("answers", "label")


def test_the_demo_class_and_the_catalogue_task_are_the_same_task():
    from ragbench.tasks.selfrag.demo import Demo

    builtin = Registry.discover().load("tasks", "demo")()
    mine = Demo()
    pairs = list(zip(builtin.examples(), mine.examples()))
    assert len(pairs) == 24 and all(a == b for a, b in pairs)
    assert builtin.prompting.build_prompt(pairs[0][0], pairs[0][0].docs) == mine.prompting.build_prompt(
        pairs[0][1], pairs[0][1].docs
    )


def test_record_errors_of_a_mapping_name_the_data_file(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"question": 3, "a": "x"}])
    task = spec_task(tmp_path, GOOD)
    (item,) = task.examples()
    assert (
        isinstance(item, RecordError)
        and str(item) == f"{tmp_path / 'd.jsonl'}:1 field 'question': expected str, got int"
    )
    assert not isinstance(item, Example)


YAML_WORDS = {
    type(None): "nothing",
    dict: "a mapping",
    list: "a list",
    bool: "true/false",
    int: "an integer",
    float: "a number",
}


@settings(max_examples=30, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.sampled_from("ab"), st.integers(), max_size=2),
    )
)
def test_a_value_of_the_wrong_kind_is_named_as_yaml_reads_it(value):
    """A task file's value is named as YAML reads it: an empty value is "nothing", a mapping "a mapping" (a
    mapping and a list read with their lines are still a mapping and a list)."""
    body = {"data": {"path": "d.jsonl"}, "fields": {"gold": {"answers": "a"}}, "prompt": {"template": "Q"}}
    text = yaml.safe_dump({"task": "t", "groups": ["g", value], "metrics": ["em"], **body}, sort_keys=False)
    with tempfile.TemporaryDirectory() as folder:
        with pytest.raises(
            ConfigError, match=f"key 'groups': item 2: expected a string, got {YAML_WORDS[type(value)]}$"
        ):
            yaml_task_class(write_task(Path(folder), text))
