"""The dataset package's errors: every bad input names the file and field it came from."""

from __future__ import annotations

import os

from sefora_common.errors import InputError, ToolkitError


class SeforaError(ToolkitError):
    """Base class of the errors the dataset package raises."""


class CorpusError(SeforaError, InputError):
    """A draft file or corpus folder that does not follow the SEFORA layout or JSON schema
    (or any other bad dataset input: a FOXGLOVE CSV file, an output folder in the way).

    ``path`` is the offending file or folder; ``field`` a JSON path such as
    ``paragraphs[3].annotations[0].type`` (empty when the problem is the whole file).
    """


class ParseError(SeforaError):
    """A PDF or DOCX file that cannot be parsed (encrypted, truncated, not that format, ...)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple:
        return (type(self), (self.path, self.reason))
