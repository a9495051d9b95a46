"""The errors of LLM access."""

from __future__ import annotations

from sefora_common.errors import ToolkitError


class LLMError(ToolkitError):
    """Base class of the errors the LLM client raises."""


class LLMRequestError(LLMError):
    """A chat request that cannot be made (no model or key configured) or that still failed
    after its retries. The message names the model, the endpoint and the reason; it never
    contains the API key.

    A package using the client passes its own subclass (``failure=``) so that its callers
    see that package's error type.
    """
