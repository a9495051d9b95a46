"""The base of every error the toolkit raises, and the shape of a bad-input error.

Each package has its own base error subclassing `ToolkitError` (``SeforaError``,
``UniMatchError``, ...), so a caller can catch one package's errors or all of them; the
``sefora`` command reports any `ToolkitError` in one line, without a traceback.
"""

from __future__ import annotations

import os


class ToolkitError(Exception):
    """Base class of the errors this project raises on bad input or failed work."""


class InputError(ToolkitError):
    """Bad input: names the file (or other source) and the field or line at fault.

    ``path`` is the offending file or folder; ``field`` a JSON path such as
    ``paragraphs[3].annotations[0].type`` or ``line 7`` (empty when the problem is the whole
    file).
    """

    def __init__(self, path: str | os.PathLike[str], field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple:  # picklable across processes despite the 3 arguments
        return (type(self), (self.path, self.field, self.message))
