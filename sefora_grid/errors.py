"""The errors the experiment grid raises: one base class and a subclass per kind of failure."""

from __future__ import annotations

from sefora_common.errors import InputError, ToolkitError
from sefora_llm.errors import LLMRequestError


class GridError(ToolkitError):
    """Base class of the errors of the experiment grid (generation, scoring, report)."""


class ConfigError(GridError):
    """An unknown configuration id (the message lists the valid form)."""


class GenerationError(GridError, LLMRequestError):
    """A generation request that cannot be made or still failed after its retries."""


class GridInputError(GridError, InputError):
    """A bad run file, result file or dataset folder: names the file and the field or line."""
