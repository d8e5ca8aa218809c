"""Re-make ragbench/_retrieval/lucene/unicode9_ranges.txt (the tables of lucene/unicode9.py): the code points that
Lucene 9.9's StandardTokenizer (its grammar generated from Unicode 9.0 and emoji 11.0 data) classes otherwise than
the `regex` package's current Unicode data.

Each code point c (all planes but surrogates and private use) is analysed by pyserini's analyzer in four contexts:
" c ", "abccd", "12c34", "ccx" and "אcב" (Hebrew letters: the quote rules). It is
- Other for Lucene when Lucene makes no term of it and it joins nothing, in every context (punctuation, symbols,
  and the characters added after Unicode 9.0, which `regex` may class as letters or digits);
and, where ragbench's analyzer (run with an empty table) gives other terms,
- pictographic when Lucene makes a term of c alone (Extended_Pictographic in emoji 11.0, which `regex` lacks);
- listed by hand in lucene/unicode9.py otherwise (a property changed since 9.0; this script prints them).

Run it with pyserini's jar (see record_pyserini.py), from the repository root:

    JAVA_HOME=/path/to/jdk-21+ PYTHONPATH=$PWD /tmp/lucene-venv/bin/python tests/data/lucene_bm25/record_unicode_sweep.py

(the venv needs regex and numpy besides pyserini and pyjnius).
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

TABLE = Path(__file__).parents[3] / "ragbench" / "_retrieval" / "lucene" / "unicode9_ranges.txt"
CODE_POINTS = [*range(0x20, 0xD800), *range(0xF900, 0x34000), *range(0xE0000, 0xE0200)]
BATCH = 2000
MARK = re.compile(r"^q([0-9a-f]{6})k$")


def contexts(cp: int) -> str:
    c = chr(cp)
    return f"q{cp:06x}k {c} ab{c}cd 12{c}34 {c}{c}x \u05d0{c}\u05d1 "


def by_code_point(terms: list[str]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    current = None
    for term in terms:
        if found := MARK.match(term):
            current = int(found.group(1), 16)
            out[current] = []
        elif current is not None:
            out[current].append(term)
    return out


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in sorted(points):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def main() -> None:
    os.environ.setdefault("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    import jnius_config

    jar = glob.glob(f"{os.path.dirname(__import__('pyserini').__file__)}/resources/jars/anserini-*-fatjar.jar")[0]
    jnius_config.set_classpath(jar)
    from jnius import autoclass

    from ragbench._retrieval.lucene import tokenizer as lucene_tokenizer
    from ragbench._retrieval.lucene.analyzer import analyze, term

    java_string = autoclass("java.lang.String")
    analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    java_analyze = autoclass("io.anserini.analysis.AnalyzerUtils").analyze
    lucene_tokenizer.lucene_classes = dict  # regex's classes alone
    term.cache_clear()
    inert, pictographic, other = [], [], []
    for start in range(0, len(CODE_POINTS), BATCH):
        text = "".join(contexts(cp) for cp in CODE_POINTS[start : start + BATCH])
        java = by_code_point([str(t) for t in java_analyze(analyzer, java_string(text.encode("utf-8"), "UTF-8"))])
        ours = by_code_point(analyze(text))
        for cp, terms in java.items():
            if terms == ["ab", "cd", "12", "34", "x", "\u05d0", "\u05d1"]:
                inert.append(cp)
            elif ours.get(cp) == terms:
                continue
            elif chr(cp) in terms and chr(cp) not in ours.get(cp, []):
                pictographic.append(cp)
            else:
                other.append(cp)
    print("by hand (check lucene/unicode9.py lists them):", [hex(cp) for cp in other])
    header = [line for line in TABLE.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    body = []
    for name, points in (("other", inert), ("pictographic", pictographic)):
        spans = [f"{a:04X}-{b:04X}" for a, b in ranges(points)]
        body += [f"{name}:", *(" ".join(spans[i : i + 10]) for i in range(0, len(spans), 10))]
    TABLE.write_text("\n".join(header + body) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
