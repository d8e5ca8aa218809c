"""A nugget file shared by every run scored with it (`nuggets=FILE`, create_nuggets.py's output lines `{"query",
"qid", "nuggets": [{"text", "importance"}]}`).

Read whole when the metric is made. A topic given twice with the same nuggets is read once (it scores the same
either way: an earlier ragbench could write such a pair); with other nuggets it is refused, naming the file, the
topic and both lines: assign_nuggets.py would take the later one without a word.

ragbench appends only to a file it wrote every line of, never through a symbolic link (one is only read), and
creates each topic's nuggets at most once among all the runs that share the file: a run holds a lock on the topic
(a POSIX record lock on one byte of the file, far past its end, chosen by the topic) while it creates and appends
them; a run waiting on that lock reads the file again once it has it, and takes the nuggets written there. The
locks are the process's own (per topic, the run's own coroutines wait on an asyncio lock first), held through the
one descriptor a `NuggetFile` keeps open: closing any other descriptor of the file in the process would drop them,
so the file is read again only through that one."""

from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.data import parse_json

from .steps import Nugget

MADE_BY = "ragbench"  # the key of every line ragbench writes (its value: the judges that made the nuggets)
LOCKS_AT = 1 << 40  # the first byte a topic's lock may take: past the end of any nugget file
WAIT = 0.05  # seconds between tries of a lock another run holds


def parse_nugget_lines(
    path: Path,
    text: str,
    topics: dict[str, list[Nugget]] | None = None,
    lines: dict[str, int] | None = None,
    first: int = 1,
) -> tuple[dict[str, list[Nugget]], bool]:
    """A nugget file's topics (qid -> nuggets, an importance absent read as vital as assign_nuggets.py reads it),
    and whether ragbench wrote every line of it; a ConfigError naming the line that is no nugget line, or a topic
    given again with other nuggets. `text` may be the file's lines from line `first` on, added to the `topics`
    read before them (whose first lines are `lines`)."""
    topics = {} if topics is None else topics
    lines = {} if lines is None else lines
    ours = True
    for number, line in enumerate(text.split("\n"), start=first):  # JSON lines end at "\n" alone (not U+2028)
        if not line.strip():
            continue
        try:
            record = parse_json(line)  # a line nested too deeply is a ValueError too, named below
            nuggets = [Nugget(n["text"], n.get("importance", "vital")) for n in record["nuggets"]]
            topic = str(record["qid"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}:{number}: not a nugget line {{'qid', 'nuggets': [{{'text', 'importance'}}]}} ({exc!r}); "
                "fix or remove the line"
            ) from None
        if topic in topics and topics[topic] != nuggets:
            raise ConfigError(
                f"{path}:{number}: topic {topic} again, with other nuggets than on line {lines[topic]}: keep one "
                "of the two lines"
            )
        topics.setdefault(topic, nuggets)
        lines.setdefault(topic, number)
        ours = ours and MADE_BY in record
    return topics, ours


class NuggetFile:
    """The nugget file at `path`: its topics when the metric was made, and a run's appends (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.topics: dict[str, list[Nugget]] = {}
        self.read_only = ""  # why ragbench only reads it; empty: it appends the topics it creates
        self.descriptor: int | None = None
        # what is read of the file so far: its topics, each one's first line, its lines and bytes (the file only
        # grows: each read takes the lines added since)
        self.written_topics: dict[str, list[Nugget]] = {}
        self.first_lines: dict[str, int] = {}
        self.lines_read = self.bytes_read = 0
        if path.is_symlink() or path.exists():
            if not path.is_file():
                raise ConfigError(f"metric nuggetizer: nugget file {path} is not a regular file; name a file")
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"metric nuggetizer: nugget file {path} cannot be read ({exc}); name a readable file"
                ) from None
            self.written_topics, ours = parse_nugget_lines(path, text, lines=self.first_lines)
            self.topics = dict(self.written_topics)
            complete = text[: text.rfind("\n") + 1]  # an unended last line is read again once ended
            self.lines_read, self.bytes_read = complete.count("\n"), len(complete.encode("utf-8"))
            if path.is_symlink():
                self.read_only = "a symbolic link, never written through"
            elif not ours:
                self.read_only = "a file ragbench did not write"
        elif not path.parent.is_dir():
            raise ConfigError(f"metric nuggetizer: the folder of nugget file {path} does not exist; create it")

    def open(self) -> int:
        """The descriptor the locks and appends go through, opened once (made when missing, never through a link)."""
        if self.descriptor is None:
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                self.descriptor = os.open(self.path, flags, 0o666)
            except OSError as exc:
                why = "a symbolic link is there now" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
                raise ValueError(f"nugget file {self.path} cannot be written ({why})") from None
        return self.descriptor

    @asynccontextmanager
    async def claimed(self, topic: str) -> AsyncIterator[dict[str, list[Nugget]]]:
        """The file's topics as they are once this process holds `topic`'s lock, held while the block runs."""
        descriptor = self.open()
        byte = LOCKS_AT + int.from_bytes(hashlib.blake2b(topic.encode(), digest_size=5).digest(), "big")
        while True:
            try:
                fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                await asyncio.sleep(WAIT)  # another run creates the topic: it is read once that run is done
        try:
            yield self.written()
        finally:
            fcntl.lockf(descriptor, fcntl.LOCK_UN, 1, byte)

    def written(self) -> dict[str, list[Nugget]]:
        """The topics in the file now: those read before, and the complete lines added since, read through the held
        descriptor (a line being appended is not read yet)."""
        descriptor = self.open()
        size, chunks, offset = os.fstat(descriptor).st_size, [], self.bytes_read
        while offset < size:
            chunk = os.pread(descriptor, min(1 << 20, size - offset), offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        data = b"".join(chunks)
        added = data[: data.rfind(b"\n") + 1]
        text = added.decode("utf-8", "replace")
        parse_nugget_lines(self.path, text, self.written_topics, self.first_lines, self.lines_read + 1)
        self.lines_read += text.count("\n")
        self.bytes_read += len(added)
        return self.written_topics

    def append(self, topic: str, query: str, nuggets: list[Nugget], made_by: dict[str, str]) -> None:
        """The topic's line written to the end of the file (on a line of its own after a line a killed run cut short,
        which is then refused when the file is read, naming it)."""
        descriptor = self.open()
        size = os.fstat(descriptor).st_size
        start = b"\n" if size and os.pread(descriptor, 1, size - 1) != b"\n" else b""
        line = {
            "query": query,
            "qid": topic,
            "nuggets": [{"text": n.text, "importance": n.importance} for n in nuggets],
            MADE_BY: made_by,
        }
        data = start + (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        written = 0
        while written < len(data):
            written += os.write(descriptor, data[written:])
