"""Re-make pyserini.json: pyserini's analysis of generated strings, and its BM25 top 10 over three generated
corpora, which tests/retrieval/test_lucene_bm25.py checks `lucene_bm25` against.

Run it with pyserini 1.6.0 (its anserini-1.7.1 fat jar: Lucene 9.9.1) and a Java 21+ (pyserini 1.x needs it):

    python -m venv /tmp/lucene-venv && /tmp/lucene-venv/bin/pip install --no-deps pyserini==1.6.0 pyjnius
    JAVA_HOME=/path/to/jdk-21+ /tmp/lucene-venv/bin/python tests/data/lucene_bm25/record_pyserini.py

It calls the classes pyserini's `LuceneSearcher` and `pyserini.index.lucene` wrap (SimpleSearcher, IndexCollection
with pyserini's default arguments and one thread, DefaultEnglishAnalyzer) through pyjnius, without importing
pyserini's Python modules (their imports need torch, onnxruntime and more). Texts reach Java as UTF-8 bytes: pyjnius
mangles the characters outside the BMP of a Python str.
"""

from __future__ import annotations

import glob
import json
import os
import random
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
K = 10
# pyserini's usual `python -m pyserini.index.lucene` arguments for a JSONL corpus (one thread: passages keep
# the corpus order)
PYSERINI_DEFAULTS = (
    "-generator DefaultLuceneDocumentGenerator -threads 1 -storePositions -storeDocvectors -storeRaw -quiet"
)

ENGLISH = (
    "the running runner's foxes jumped quickly generalization relational conditional hopping hoping agreed feed "
    "ponies caresses sky skies happy happiness electricity electrical triplicate formative formalize adjustable "
    "irritant replacement adoption controlling rolling generously sensibility possibly activate angularity "
    "homologous effective bowdlerize logically analogies syzygy yes cry crying castle castles knight knights "
    "river rivers bank banking banks money market markets city cities capital war wars king kings queen battle "
    "museum museums science scientific physics physical chemistry biology doctor doctors"
).split()
ODD = (
    "U.S.A. e-mail me@mail.org http://example.com/a?b=1&c=d#x www.test.co.uk 3.14 1,000,000 10:30 a_b __init__ "
    "O'Neil's rock'n'roll can't it's JAMES'S x's 's 1st 2nd A1B2 -- ... !? (paren) [x] $5 5% #tag @user C++ c# "
    "f(x)=y 1.2.3 1,2 a.b.c a:b a;b 1;2 1'2 a'b a''b a..b v2.0 IPv6 2024-01-01 +1-800-555-0199 x I a The THE And "
    "not No"
).split()
UNICODE = (
    "café naïve Zürich İstanbul ΣΟΦΊΑ Ελληνικά Москва 日本語 ひらがな カタカナ ｶﾀｶﾅ 한국어 ภาษาไทย ພາສາລາວ ខ្មែរ "
    "עברית ה\"ה ש' العربية हिन्दी বাংলা 😀 👍🏽 👨\u200d👩\u200d👧 🇺🇸 🇺🇸🇬🇧 1️⃣ #️⃣ © ® ™ ❤️ a\u0301 "
    "x\u00ady １２３ Ａｂｃ ﬁ ß Straße ǅ 𝐀𝐁𝐂 𝟏𝟐 dog\u2019s dog\uff07s 中文字符 〆 々 〇 ー ・ ½ ² ① ＿ a\u2060b "
    "٣٫١٤ ۱۲ Ⅻ ⓐ 🀄 ⌚ ☺ ☺️ ✈ 👋🏻 🏻 𐐀𐐨 𐐀s ŉ Ǆ"
).split()
SEPARATORS = [" ", " ", " ", "", ", ", ". ", "-", "/", "'", "\n"]


def text(rng: random.Random, pieces: list[str], low: int, high: int) -> str:
    return "".join(rng.choice(pieces) + rng.choice(SEPARATORS) for _ in range(rng.randint(low, high)))


def corpus(rng: random.Random, pieces: list[str], size: int) -> list[dict[str, str]]:
    docs = [text(rng, pieces, 0, 40) for _ in range(size)]
    docs[:6] = ["", "   ", "the and of", "fox", "fox", "Fox's fox, fox!"]  # empty, stop words only, one word, ties
    ids = [f"d{n:04d}" for n in range(size)]
    rng.shuffle(ids)  # ties come back in id order, not corpus order
    return [{"id": doc_id, "contents": contents} for doc_id, contents in zip(ids, docs)]


def queries(rng: random.Random, pieces: list[str], count: int) -> list[str]:
    made = [text(rng, pieces, 1, 6) for _ in range(count)]
    return made + ["", "the of and", "?!", "fox", "fox fox fox", "running runs ran runner", "'s", "a" * 300]


def strings(rng: random.Random, count: int) -> list[str]:
    made = [text(rng, ENGLISH + ODD + (UNICODE if i % 2 else []), 0, 25) for i in range(count)]
    return made + ["a" * 300, "ab'" * 100, "_" * 300 + "a", "1" * 254 + ".5", "𝐀" * 200, ""]


# characters whose word-break class changed since Unicode 9.0 (ragbench/_retrieval/lucene/unicode9.py lists them)
RETYPED = [
    *range(0x600, 0x606),
    0x6DD,
    0x70F,
    0x8E2,
    0x110BD,
    0x110CD,
    0xFE10,
    0xFE14,
    0x19DA,
    *range(0x1FBF0, 0x1FBFA),
]


def code_point_strings() -> list[str]:
    """Every 37th code point of the planes in use, and the retyped ones, each alone, between letters, between
    digits, doubled and between Hebrew letters: where Lucene's Unicode 9.0 classes differ from today's."""
    planes = [*range(0x80, 0xD800, 37), *range(0xF900, 0x34000, 37), *range(0xE0000, 0xE0200, 37)]
    return [f"{c} ab{c}cd 12{c}34 {c}{c}x \u05d0{c}\u05d1" for c in map(chr, planes + RETYPED)]


def main() -> None:
    os.environ.setdefault("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    import jnius_config

    jar = glob.glob(f"{os.path.dirname(__import__('pyserini').__file__)}/resources/jars/anserini-*-fatjar.jar")[0]
    jnius_config.add_options("-Xmx2g")
    jnius_config.set_classpath(jar)
    from jnius import autoclass

    java_string = autoclass("java.lang.String")
    analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    analyze = autoclass("io.anserini.analysis.AnalyzerUtils").analyze

    def jstr(value: str) -> object:
        return java_string(value.encode("utf-8"), "UTF-8")

    rng = random.Random(59)
    record: dict = {"pyserini": "1.6.0", "anserini": Path(jar).name, "lucene": "9.9.1", "k": K, "corpora": {}}
    texts = strings(rng, 3000) + code_point_strings()
    record["analysis"] = [[value, [str(t) for t in analyze(analyzer, jstr(value))]] for value in texts]
    for name, pieces in (
        ("english", ENGLISH + ODD),
        ("unicode", ENGLISH[:20] + UNICODE),
        ("mixed", ENGLISH + ODD + UNICODE),
    ):
        docs = corpus(rng, pieces, 400)
        asked = queries(rng, pieces, 150)
        with tempfile.TemporaryDirectory() as work:
            (Path(work) / "in").mkdir()
            with open(Path(work) / "in" / "docs.jsonl", "w", encoding="utf-8") as out:
                for doc in docs:
                    out.write(json.dumps(doc, ensure_ascii=False) + "\n")
            args = f"-collection JsonCollection -input {work}/in -index {work}/index {PYSERINI_DEFAULTS}".split()
            autoclass("io.anserini.index.IndexCollection").main(args)
            searcher = autoclass("io.anserini.search.SimpleSearcher")(f"{work}/index")
            searcher.set_bm25(0.9, 0.4)
            hits = [[[h.docid, h.score] for h in searcher.search(jstr(q), K)] for q in asked]
            searcher.close()
        record["corpora"][name] = {"docs": docs, "queries": asked, "hits": hits}
    (HERE / "pyserini.json").write_text(json.dumps(record, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
