"""Synthetic CRAG Task 3 data in the released format, for load tests and benchmarks.

Records follow the v5 schema (`interaction_id`, `query_time`, `domain`, `question_type`,
`static_or_dynamic`, `popularity`, `query`, `answer`, `alt_ans`, `split`, and 50 `search_results`
of `page_name`, `page_url`, `page_snippet`, `page_result`, `page_last_modified`) and are written as
one `.jsonl` member of a `.tar.bz2` cut into `.tar.bz2.part0..N`, as facebookresearch/CRAG ships
Task 3.

Page sizes (`PageSizes`): by default those of real CRAG pages (`CRAG_PAGES`). The CRAG repository's
own Task 3 example file has pages of median 257 kB of HTML (p10 64 kB, p90 669 kB, max 1.56 MB, mean
298 kB). A log-normal split at the median, with its own sigma below (ln(257/64) / z(0.9) = 1.08) and
above (ln(669/257) / z(0.9) = 0.75), gives those three quantiles; cut at 1 kB and 1.56 MB, its mean
is ≈320 kB (its upper tail is a little heavier than the file's). `PageSizes.small(median)` is the
small mode of tests and CI: log-normal with sigma 1.0 around `median` (30 kB: mean ≈ 50 kB, 5 % over
≈155 kB), cut at 1 kB and 2 MB. Either way 4 % of pages are empty (`page_result` "").

Page contents (`page_html`) are fitted to the same file's 50 pages, as `html_to_sentences` sees them:
6.7 % of the bytes visible text, 0.41 sentences per kB of HTML (123 a page), sentences of 161
characters on average (median 97: link menus without punctuation run on), 6.1 tags per kB, scripts
28 % and styles 13 % of the bytes, the records' JSON compressing 7.6:1 in bz2, parsed at 47 ms a page
on one core of a 2-vCPU VM. The synthetic pages give 6.6 %, 0.40-0.42, 158-164 (median 100-104),
5.7, 7.2:1 and the same parse time per kB, so parsing, MiniLM and decompression do the work of real
pages (tests/tasks/crag/test_crag_scale.py checks the text share and sentence rate).
"""

from __future__ import annotations

import io
import json
import math
import random
import string
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

WORDS = (
    "the team won league season player city company price market year album song film director record revenue "
    "stock growth report history music award best new artist released country president election energy "
    "science research study data model series game score points million billion percent according said "
    "first last since during after before under over between against about people world government"
).split()
NAME_CHARS = string.ascii_lowercase + string.digits
# the kinds of block a page is drawn from (each a _PageWriter method) and their weights
BLOCKS = {"paragraph": 0.22, "menu": 0.22, "table": 0.06, "script": 0.30, "style": 0.10, "icon": 0.06, "ad": 0.04}


@dataclass(frozen=True)
class PageSizes:
    """Bytes of HTML per page: log-normal around `median` with `sigma_below` under it and `sigma_above`
    over it (a split log-normal), cut at `least` and `most`; a share `empty` of the pages are empty."""

    median: int
    sigma_below: float
    sigma_above: float
    least: int = 1_000
    most: int = 2_000_000
    empty: float = 0.04

    @classmethod
    def small(cls, median: int = 30_000) -> PageSizes:
        """The small synthetic pages of tests and CI: sigma 1.0 on both sides."""
        return cls(median, 1.0, 1.0)

    def draw(self, rng: random.Random) -> int:
        """One page's size (0: an empty page)."""
        if rng.random() < self.empty:
            return 0
        z = rng.gauss(0.0, 1.0)
        size = self.median * math.exp(z * (self.sigma_below if z < 0 else self.sigma_above))
        return int(min(self.most, max(self.least, size)))


_Z90 = NormalDist().inv_cdf(0.9)  # the standard normal's 90th percentile, 1.28
CRAG_PAGES = PageSizes(257_000, math.log(257 / 64) / _Z90, math.log(669 / 257) / _Z90, most=1_560_000)


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(4, 20))).capitalize() + rng.choice(".!?")


class _PageWriter:
    """The blocks of one page, a method per kind of `BLOCKS` (its keys are the method names). Class
    names, ids and script values come from the page's own pool of random names, reused 98 % of the time
    as a site's templates reuse theirs (what sets how well the archive compresses)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: list[str] = []

    def name(self, length: int = 8) -> str:
        if self.names and self.rng.random() < 0.98:
            return self.rng.choice(self.names)[:length]
        name = "".join(self.rng.choices(NAME_CHARS, k=length))
        self.names.append(name)
        return name

    def repeated(self, head: str, times: int, item: Callable[[], str], tail: str, joiner: str = "") -> str:
        """`head`, then `times` items joined by `joiner`, then `tail`: the shape of every block but the ad. The
        arguments are evaluated in the order the page's random draws were made (head, count, items)."""
        return head + joiner.join(item() for _ in range(times)) + tail

    def paragraph(self) -> str:
        rng, name = self.rng, self.name
        head = f'<div class="{name(6)} article-body" data-track="{name()}"><p class="{name(5)}">'
        return self.repeated(head, rng.randint(1, 3), lambda: _sentence(rng), "</p></div>", " ")

    def menu(self) -> str:
        """Link texts without punctuation: blingfire joins them into long "sentences"."""
        rng, name = self.rng, self.name

        def link() -> str:
            start = f'<li class="{name(5)}"><a href="/{rng.choice(WORDS)}/{name()}" class="{name(6)}">'
            return start + " ".join(w.title() for w in rng.choices(WORDS, k=rng.randint(1, 3))) + "</a></li>"

        return self.repeated(f'<ul class="{name(6)}-menu">', rng.randint(4, 12), link, "</ul>")

    def table(self) -> str:
        rng, name = self.rng, self.name

        def row() -> str:
            return self.repeated(
                "<tr>", 4, lambda: f'<td class="{name(4)}">{rng.choice(WORDS)} {rng.randint(1, 9999)}</td>', "</tr>"
            )

        return self.repeated('<table class="data"><tbody>', 3, row, "</tbody></table>")

    def script(self) -> str:
        rng, name = self.rng, self.name
        head = '<script>window.__state=window.__state||{};__state["' + name() + '"]={'

        def entry() -> str:
            return f'"{rng.choice(WORDS)}_{name(4)}":"{name(rng.randint(6, 24))}"'

        return self.repeated(head, rng.randint(20, 120), entry, "};</script>", ",")

    def style(self) -> str:
        rng, name = self.rng, self.name

        def rule() -> str:
            return (
                f".{name(6)}-{rng.choice(WORDS)}{{{rng.choice(['display:flex', 'margin:0', 'padding:4px 8px'])};"
                f"{rng.choice(['line-height:1.5', 'font-size:14px', 'gap:8px', 'width:100%'])}}}"
            )

        return self.repeated("<style>", rng.randint(20, 80), rule, "</style>")

    def icon(self) -> str:
        rng = self.rng
        head = f'<svg class="icon-{self.name(4)}" viewBox="0 0 24 24"><path d="'

        def point() -> str:
            return f"{rng.randint(0, 24)}.{rng.randint(0, 99)}"

        return self.repeated(head, rng.randint(10, 40), lambda: f"M{point()} {point()}", '"></path></svg>', " ")

    def ad(self) -> str:
        name = self.name
        return (
            f'<div class="ad-container" data-slot="{name(6)}"><iframe src="https://ads.example.com/'
            f'{name(12)}" width="300" height="250"></iframe><noscript><img src="https://px.example.com/'
            f'{name(10)}.gif"></noscript></div>'
        )


def page_html(rng: random.Random, size: int, title: str) -> str:
    """A web page of about `size` bytes: a head, then blocks drawn by the weights of `BLOCKS`
    (paragraphs, link menus, tables, inline scripts and styles, SVG icons, ads), indented on lines of
    their own, and a footer."""
    if size <= 0:
        return ""
    head = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>'
    tail = "<footer><p>© 2024 Example Media. All rights reserved.</p></footer></body></html>"
    writer, kinds, weights = _PageWriter(rng), list(BLOCKS), list(BLOCKS.values())
    parts, used = [head, f"<h1>{title}</h1>"], len(head) + len(tail)
    while used < size:
        block = getattr(writer, rng.choices(kinds, weights)[0])().replace("><", ">\n    <")
        parts.append(block)
        used += len(block)
    parts.append(tail)
    return "".join(parts)


def task3_record(rng: random.Random, index: int, pages: int = 50, sizes: PageSizes = CRAG_PAGES) -> dict[str, Any]:
    topic = " ".join(rng.choices(WORDS, k=3))
    results = []
    for p in range(pages):
        html = page_html(rng, sizes.draw(rng), f"{topic.title()} - page {p}")
        results.append(
            {
                "page_name": f"{topic.title()} {p}",
                "page_url": f"https://example.org/{index}/{p}",
                "page_snippet": _sentence(rng),
                "page_result": html,
                "page_last_modified": "Thu, 01 Feb 2024 10:00:00 GMT" if p % 3 else "",
            }
        )
    return {
        "interaction_id": f"synthetic-{index}",
        "query_time": "03/01/2024, 10:00:00 PT",
        "domain": "finance",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "popularity": "",
        "split": 1,
        "query": f"what was the {topic} in {2000 + index % 24}?",
        "answer": f"{topic} {index}",
        "alt_ans": [],
        "search_results": results,
    }


def standin_tokenizer(folder: Path) -> Path:
    """A stand-in for the Llama-2 tokenizer (one token per byte after a BOS, as tokenizer.json, with
    Llama-2's vocabulary size and the ids the pre-flight recognises it by; fillers pad it) for runs
    whose outcome does not depend on where CRAG's 75-token cut falls (tests, load benchmarks)."""
    import os

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    from .preflight import LLAMA2_IDS, LLAMA2_VOCAB_SIZE

    if not (folder / "tokenizer.json").is_file():
        alphabet = pre_tokenizers.ByteLevel.alphabet()
        vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{symbol: i + 3 for i, symbol in enumerate(sorted(alphabet))}}
        vocab.update({token: id_ for token, id_ in LLAMA2_IDS.items()})
        taken = set(vocab.values())
        vocab.update({f"<filler{i}>": i for i in range(LLAMA2_VOCAB_SIZE) if i not in taken})
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
        folder.mkdir(parents=True, exist_ok=True)
        scratch = folder / f"tokenizer.json.{os.getpid()}"
        tokenizer.save(str(scratch))
        os.replace(scratch, folder / "tokenizer.json")
    return folder


def write_task3_archive(
    folder: Path,
    questions: int,
    pages: int = 50,
    sizes: PageSizes = CRAG_PAGES,
    seed: int = 0,
    parts: int = 2,
    stem: str = "crag_task_3_dev_v5",
) -> Path:
    """`questions` records in `<stem>.tar.bz2.part0..` under `folder`; returns the first part."""
    rng = random.Random(seed)
    lines = "".join(json.dumps(task3_record(rng, i, pages, sizes)) + "\n" for i in range(questions)).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        member = tarfile.TarInfo(f"{stem}/{stem}_0.jsonl")
        member.size = len(lines)
        archive.addfile(member, io.BytesIO(lines))
    data = buffer.getvalue()
    folder.mkdir(parents=True, exist_ok=True)
    cut = -(-len(data) // parts)
    for n in range(parts):
        (folder / f"{stem}.tar.bz2.part{n}").write_bytes(data[n * cut : (n + 1) * cut])
    return folder / f"{stem}.tar.bz2.part0"
