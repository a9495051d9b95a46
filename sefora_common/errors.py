"""The base of every error the toolkit raises, and the shapes of bad-input and bad-option
errors.

Each package has its own base error subclassing `ToolkitError` (``SeforaError``,
``UniMatchError``, ...), so a caller can catch one package's errors or all of them; the
``sefora`` command reports any `ToolkitError` in one line, without a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


class ToolkitError(Exception):
    """Base class of the errors this project raises on bad input or failed work."""


class OptionError(ToolkitError, ValueError):
    """An option with a value it cannot take, or given where nothing would use it (the
    message names the option). A ValueError too, as Python's own bad-argument errors are."""


class OutputError(ToolkitError):
    """An output (file, folder, cache) that cannot be written: names the path and the
    operating system's reason (no such folder, permission denied, a folder in the way...)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: cannot write: {reason}")

    def __reduce__(self) -> tuple:
        return (type(self), (self.path, self.reason))

    @classmethod
    def of(cls, path: str | os.PathLike[str], err: OSError) -> OutputError:
        """The error for ``err``, raised while writing ``path``."""
        return cls(path, err.strerror or str(err))


class InputError(ToolkitError):
    """Bad input: names the file (or other source) and the field or line at fault.

    ``path`` is the offending file or folder; ``field`` a JSON path such as
    ``paragraphs[3].annotations[0].type`` or ``line 7`` (empty when the problem is the whole
    file). ``problems`` lists every (field, message) found in the file: one for an error
    made directly, all of them for one made by `of_problems`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        field: str,
        message: str,
        problems: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        self.problems = list(problems) or [(field, message)]
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")

    @classmethod
    def of_problems(
        cls, path: str | os.PathLike[str], problems: Sequence[tuple[str, str]]
    ) -> InputError:
        """One error listing every (field, message) problem of ``path`` (at least one), one
        per line when there are several."""
        if not problems:
            raise ValueError("of_problems needs at least one problem")
        if len(problems) == 1:
            return cls(path, *problems[0])
        lines = "".join(f"\n  - {f}: {m}" if f else f"\n  - {m}" for f, m in problems)
        return cls(path, "", f"{len(problems)} problems:{lines}", problems)

    def __reduce__(self) -> tuple:  # picklable across processes despite the arguments
        return (type(self), (self.path, self.field, self.message, self.problems))


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
