"""The project's error types: every bad input is reported with the file and field it came from."""

from __future__ import annotations


class SeforaError(Exception):
    """Base class of the errors this project raises on bad input or failed work."""


class CorpusError(SeforaError):
    """A draft file or corpus folder that does not follow the SEFORA layout or JSON schema.

    ``path`` is the offending file or folder; ``field`` a JSON path such as
    ``paragraphs[3].annotations[0].type`` (empty when the problem is the whole file).
    """

    def __init__(self, path: str, field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")


class ParseError(SeforaError):
    """A PDF or DOCX file that cannot be parsed (encrypted, truncated, not that format, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")
