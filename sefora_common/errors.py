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


class MissingExtraError(ToolkitError, ImportError):
    """A feature whose optional dependencies (an extra of the distribution) are missing.

    An `ImportError` too, so ``except ImportError`` still catches it; the message names the
    feature, the missing package and the ``pip install`` line that brings it.
    """

    def __init__(self, feature: str, extra: str, missing: str | None) -> None:
        self.feature, self.extra, self.missing = feature, extra, missing
        what = f" ({missing} is not installed)" if missing else ""
        super().__init__(
            f"{feature} needs the '{extra}' extra{what}: pip install 'sefora-toolkit[{extra}]'"
        )

    def __reduce__(self) -> tuple:
        return (type(self), (self.feature, self.extra, self.missing))
