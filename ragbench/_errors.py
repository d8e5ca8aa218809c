"""Errors a user sees. A `ConfigError` is printed as one line (what, where, how to fix). The exit codes
of the command line, shared by the built-in commands and those plugins add."""

EXIT_INCOMPLETE = 1  # the work ran, but some of it failed (failed examples, skipped records)
EXIT_CONFIG = 2  # a ConfigError: nothing was done


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
