"""Errors a user sees. A `ConfigError` is printed as one line (what, where, how to fix). The exit codes
of the command line, shared by the built-in commands and those plugins add."""

import difflib
import reprlib
from collections.abc import Iterable

EXIT_INCOMPLETE = 1  # the work ran, but some of it failed (failed examples, skipped records)
EXIT_CONFIG = 2  # a ConfigError: nothing was done
EXIT_CONSOLE = 74  # the work was done, but the console (stdout, stderr) could not be written (sysexits' EX_IOERR)
EXIT_TRACKER = 75  # the run is complete and saved, but logging it to a tracker failed (sysexits' EX_TEMPFAIL: retry)


class ConfigError(Exception):
    """Bad command line, options or files: the run cannot start."""


class RecordError(Exception):
    """A bad record in a data or predictions file: recorded and counted, the run goes on."""

    def __init__(self, path: str, line: int, message: str, field: str | None = None, at: str | None = None) -> None:
        """`at`: where a record in data without lines is (a path in a JSON document, `Data[3]`; a dataset's
        `row 3`), named instead of the line; `line` is then the record's number."""
        self.path, self.line, self.field, self.at = path, line, field, at
        where = (f"{path} {at}" if at else f"{path}:{line}") + (f" field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")


def shown_value(value: object, limit: int = 200) -> str:
    """A value as a message shows it: a string as it is, anything else by its repr, cut to about `limit`
    characters; a value that expands without end (a YAML alias of an alias, nine times over) is never
    formatted whole."""
    short = reprlib.Repr()  # (its limits are keyword arguments only from Python 3.12)
    short.maxlevel, short.maxstring, short.maxother = 3, 80, 80
    short.maxlist = short.maxtuple = short.maxdict = short.maxset = 8
    text = value if isinstance(value, str) else short.repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def one_line_text(text: str) -> str:
    """`text` with its line breaks and other unprintable characters written as escapes (`\\n`), so that a message
    quoting it (an exception's text naming a JSON key of a damaged file) stays one line."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def did_you_mean(name: str, known: Iterable[str], most: int = 1, cutoff: float = 0.6) -> str:
    """ "; did you mean 'x'?" (up to `most` names of `known` close to `name`, difflib's ratio at least `cutoff`), what a
    line refusing an unknown name adds; "" where none is close."""
    close = difflib.get_close_matches(str(name), list(known), n=most, cutoff=cutoff)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
