"""The errors UniMatch raises: one base class and a subclass per kind of failure."""

from __future__ import annotations

from sefora_common.errors import InputError, OptionError, ToolkitError
from sefora_llm.errors import LLMRequestError


class UniMatchError(ToolkitError):
    """Base class of the errors the UniMatch metric raises."""


class BackendError(UniMatchError, LLMRequestError):
    """A segmentation or similarity request that cannot be made or still failed after its
    retries. The message says which backend failed and why (HTTP status, timeout, malformed
    reply); it never contains an API key."""


class UniMatchInputError(UniMatchError, InputError):
    """Bad input to UniMatch or its training: names the file and the field or line."""


class UniMatchOptionError(UniMatchError, OptionError):
    """A UniMatch option with a value it cannot take (an unknown backend, a threshold out of
    (0, 4], ...) or one that the chosen backends would not use; names the option."""


class ModelFileError(UniMatchError):
    """A learned model file that is missing or unreadable (``sefora train-offline`` makes it)."""


def as_backend_error(err: LLMRequestError) -> BackendError:
    """``err`` as a `BackendError` (the LLM backends' client already raises that type)."""
    return err if isinstance(err, BackendError) else BackendError(str(err))
