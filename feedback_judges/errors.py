"""The errors the feedback judges raise: one base class and a subclass per kind of failure."""

from __future__ import annotations

from sefora_common.errors import InputError, OptionError, ToolkitError
from sefora_llm.errors import LLMRequestError


class JudgeError(ToolkitError):
    """Base class of the errors of the feedback judges (rubric judge, QWK, DPO export)."""


class JudgeRequestError(JudgeError, LLMRequestError):
    """A judging request that cannot be made or still failed after its retries (the message
    names model, endpoint and reason, never the API key)."""


class JudgeOptionError(JudgeError, OptionError):
    """A rubric-judge option with a value it cannot take; names the option."""


class JudgeInputError(JudgeError, InputError):
    """Bad input to a judge or the DPO export: names the file (or argument) and the field."""


class RubricError(JudgeInputError):
    """A rubric (file or dict) that does not follow the rubric schema; names file and field."""
