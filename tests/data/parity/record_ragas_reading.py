"""Records how ragas 0.4.3's instructor 1.17 reads judge replies, into ragas_reading.json: for generated reply texts
(JSON of each output model with its integers written as integers, floats, booleans or strings, fields missing or
of the wrong type, in a code fence, after or before text, nested up to 100,000 levels, random unicode), whether
instructor's JSON-mode handler (`OpenAIJSONHandler.parse_response`, strict as ragas's call makes it) accepts the
reply, the model it made (`model_dump()`) or the error text its re-ask sends. tests/metrics/test_ragas_replies.py reads
every case with ragbench. Seeded: the same cases each run.

In the scratch environment of record_ragas_replies.py:
    /tmp/rg/bin/python tests/data/parity/record_ragas_reading.py
"""

from __future__ import annotations

import json
import random
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_PER_PROMPT = 60


def models() -> dict[str, Any]:
    """ragbench's prompt names (metrics/ragas/prompts.json) -> ragas's output model."""
    from ragas.metrics.collections.answer_relevancy.util import AnswerRelevanceOutput
    from ragas.metrics.collections.context_precision.util import ContextPrecisionOutput
    from ragas.metrics.collections.context_recall.util import ContextRecallOutput
    from ragas.metrics.collections.factual_correctness import util as fc
    from ragas.metrics.collections.faithfulness import util as faithfulness

    return {
        "statements": faithfulness.StatementGeneratorOutput,
        "nli": faithfulness.NLIStatementOutput,
        "context_precision": ContextPrecisionOutput,
        "context_recall": ContextRecallOutput,
        "claims": fc.ClaimDecompositionOutput,
        "question": AnswerRelevanceOutput,
        "claim_nli": fc.NLIStatementOutput,
    }


def instance(schema: dict[str, Any], defs: dict[str, Any], rng: random.Random) -> Any:
    """A value of `schema`, its integers spelt at random, now and then a field dropped or of the wrong type."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, rng)
    kind = schema.get("type")
    if rng.random() < 0.03:
        return rng.choice([None, 1, "x", [], {}, 0.5])
    if kind == "object":
        out = {name: instance(field, defs, rng) for name, field in schema["properties"].items() if rng.random() > 0.04}
        if rng.random() < 0.1:
            out["extra"] = "ignored"
        return out
    if kind == "array":
        return [instance(schema["items"], defs, rng) for _ in range(rng.randint(0, 3))]
    if kind == "integer":
        return rng.choice([0, 1, 1, 0, 1.0, 0.0, True, False, "1", "0", 2, -1, 1.5, " 1"])
    return rng.choice(["Paris is the capital.", "", "é ü ß 漢字 🙂", 'quote " and \\ slash', "\u2028line"])


def nested(kind: str, depth: int) -> str:
    """A reply nested `depth` levels deep: arrays in a "statements" field, or objects (written in the fixture as
    {"nested": kind, "depth": depth})."""
    if kind == "array":
        return '{"statements": ' + "[" * depth + "]" * depth + "}"
    return '{"a": ' * depth + "1" + "}" * depth


def deep(rng: random.Random) -> dict[str, Any]:
    depth = rng.choice([1, 2, 10, 126, 127, 128, 129, 200, 254, 255, 256, 257, 1_000, 5_000, 100_000])
    return {"nested": rng.choice(["array", "object"]), "depth": depth}


def written(value: Any, rng: random.Random) -> str:
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
    wrap = rng.choice(["bare", "bare", "bare", "space", "fence", "before", "after", "two", "cut", "single"])
    return {
        "bare": text,
        "space": "\n  " + text + "\n",
        "fence": "```json\n" + text + "\n```",
        "before": "Here is the JSON:\n" + text,
        "after": text + "\nI hope this helps.",
        "two": text + " " + text,
        "cut": text[: max(1, len(text) // 2)],
        "single": text.replace('"', "'"),
    }[wrap]


def noise(rng: random.Random) -> str:
    alphabet = '{}[]":, 01abc\\\n\t`é漢🙂\u0000'
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def main() -> None:
    from instructor.v2.providers.openai.handlers import OpenAIJSONHandler
    from pydantic import ValidationError

    handler = OpenAIJSONHandler()
    rng = random.Random(68)
    cases = []
    for prompt, model in models().items():
        schema = model.model_json_schema()
        texts: list[Any] = [
            written(instance(schema, schema.get("$defs", {}), rng), rng) for _ in range(CASES_PER_PROMPT)
        ]
        texts += [deep(rng) for _ in range(6)] + [noise(rng) for _ in range(6)]
        for shown in texts:
            text = shown if isinstance(shown, str) else nested(shown["nested"], shown["depth"])
            message = SimpleNamespace(content=text, role="assistant")
            response = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])
            try:
                parsed = handler.parse_response(response, model, strict=True)
                cases.append({"prompt": prompt, "text": shown, "accepted": True, "value": parsed.model_dump()})
            except ValidationError as exc:
                cases.append({"prompt": prompt, "text": shown, "accepted": False, "error": str(exc)})
    fixture = {
        "source": {name: version(name) for name in ("ragas", "instructor", "pydantic", "pydantic-core")},
        "how": (__doc__ or "").split("\n\nIn the scratch")[0].replace("\n", " "),
        "cases": cases,
    }
    text = json.dumps(fixture, indent=1, ensure_ascii=False) + "\n"
    (HERE / "ragas_reading.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
