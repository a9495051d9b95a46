"""The one OpenAI-compatible chat client of the toolkit: retries, Retry-After, timeouts,
a concurrency limit, strict reply parsing and API-key redaction.

Any server speaking the chat-completions protocol works (OpenAI, Gemini's OpenAI endpoint,
vLLM, Ollama, llama.cpp's server) through ``base_url``. The ``openai`` package is imported
only when a request is made.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sefora_common.progress import progress_bar
from sefora_llm.errors import LLMRequestError

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

ENV_MODEL = "UNIMATCH_MODEL"
ENV_BASE_URL = "UNIMATCH_BASE_URL"
ENV_API_KEY = "UNIMATCH_API_KEY"
# Local servers (vLLM, Ollama, llama.cpp) accept any key; the client library requires one.
_PLACEHOLDER_KEY = "no-key-needed"
_RETRYABLE_STATUS = {408, 409, 429}
_REDACTED = "[REDACTED]"


class ReplyError(ValueError):
    """A reply that does not have the required form (the request is retried)."""


@dataclass(frozen=True)
class ChatReply:
    """The text of a reply, the token counts the server reports, and the seconds it took."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float


def llm_configured(model: str | None, base_url: str | None) -> bool:
    """Whether an LLM endpoint is configured, by argument or environment variable."""
    return bool(model or base_url or os.environ.get(ENV_MODEL) or os.environ.get(ENV_BASE_URL))


@dataclass
class LLMSettings:
    """Where and how to send chat requests. The API key is never shown in ``repr``."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 3
    concurrency: int = 4
    backoff: float = 1.0
    max_wait: float = 120.0

    def resolved(self, failure: type[LLMRequestError] = LLMRequestError) -> LLMSettings:
        """A copy with model, endpoint and key filled from the environment where unset.

        Raises ``failure`` when no model is named or no key can be found for a remote
        endpoint.
        """
        model = self.model or os.environ.get(ENV_MODEL)
        base_url = (
            self.base_url or os.environ.get(ENV_BASE_URL) or os.environ.get("OPENAI_BASE_URL")
        )
        api_key = self.api_key or os.environ.get(ENV_API_KEY) or os.environ.get("OPENAI_API_KEY")
        if not model:
            raise failure(f"the LLM backend needs a model name: pass model=... or set ${ENV_MODEL}")
        if not api_key:
            if not base_url:
                raise failure(
                    f"no API key for the default OpenAI endpoint: pass api_key=... or set "
                    f"${ENV_API_KEY} (or use base_url=... for a local server)"
                )
            api_key = _PLACEHOLDER_KEY
        if self.max_retries < 0 or self.concurrency < 1 or self.timeout <= 0:
            raise ValueError("max_retries must be >= 0, concurrency >= 1 and timeout > 0")
        return LLMSettings(
            model=model,
            base_url=base_url,
            api_key=api_key,
            timeout=self.timeout,
            max_retries=self.max_retries,
            concurrency=self.concurrency,
            backoff=self.backoff,
            max_wait=self.max_wait,
        )


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a reply (a Markdown code fence around it is allowed).

    Raises `ReplyError` for anything else, including an object with a repeated key.
    """
    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, flags=re.DOTALL)
    if fence:
        body = fence.group(1)

    def no_duplicates(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise ReplyError(f"key(s) given more than once: {', '.join(repeated)}")
        return dict(items)

    try:
        value = json.loads(body, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as err:
        raise ReplyError(f"not a JSON object ({err.msg} at char {err.pos})") from err
    if not isinstance(value, dict):
        raise ReplyError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _retry_after_seconds(headers: Any) -> float | None:
    """The wait a 429/503 reply asks for, from ``retry-after-ms`` or ``retry-after``."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_to_datetime(value) if value.strip() else None
    if parsed is None:
        return None
    return max(0.0, parsed.timestamp() - time.time())


class LLMClient:
    """Sends chat requests with bounded retries; parses each reply strictly.

    At most ``settings.concurrency`` requests are in flight at once, across threads. A
    request that cannot be made or keeps failing raises ``failure`` (an `LLMRequestError`
    subclass of the calling package).
    """

    def __init__(
        self, settings: LLMSettings, failure: type[LLMRequestError] = LLMRequestError
    ) -> None:
        self.failure = failure
        self.settings = settings.resolved(failure)
        self._semaphore = threading.BoundedSemaphore(self.settings.concurrency)
        self._client: Any = None
        self._client_lock = threading.Lock()

    @property
    def config(self) -> dict[str, Any]:
        """Model and endpoint, for results (never the key)."""
        return {"model": self.settings.model, "base_url": self.endpoint}

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.settings.base_url or "https://api.openai.com/v1"

    def redact(self, text: str) -> str:
        """``text`` with the API key, if present, replaced by a marker."""
        key = self.settings.api_key
        if key and key != _PLACEHOLDER_KEY:
            text = text.replace(key, _REDACTED)
        return text

    def _openai(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    api_key=self.settings.api_key,
                    base_url=self.settings.base_url,
                    timeout=self.settings.timeout,
                    max_retries=0,  # retries are ours, so that every one is counted and bounded
                )
            return self._client

    def _backoff(self, attempt: int) -> float:
        base = self.settings.backoff * (2**attempt)
        return min(self.settings.max_wait, base * (1 + 0.25 * random.random()))

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        parse: Callable[[ChatReply], T],
        what: str,
        **params: Any,
    ) -> T:
        """Send ``messages`` and return ``parse(reply)``.

        ``params`` go to the chat-completions call (e.g. ``max_tokens``); temperature is 0
        unless given. HTTP 5xx/408/409/429 replies, timeouts, connection errors and replies
        that ``parse`` rejects with `ReplyError` are retried up to ``max_retries`` times,
        waiting as a 429's Retry-After asks or with exponential backoff. Raises
        ``failure`` naming ``what`` and the last reason when no attempt succeeds, or at
        once on other HTTP errors.
        """
        import openai

        attempts = self.settings.max_retries + 1
        reason = ""
        attempt = 0
        for attempt in range(attempts):
            wait: float | None = None
            try:
                return parse(self._send(messages, params))
            except ReplyError as err:
                reason = f"malformed reply: {err}"
            except openai.APITimeoutError:
                reason = f"no reply within the {self.settings.timeout:g} s timeout"
            except openai.APIConnectionError as err:
                reason = f"connection failed: {err}"
            except openai.APIStatusError as err:
                reason = f"HTTP {err.status_code}: {_error_message(err)}"
                if err.status_code < 500 and err.status_code not in _RETRYABLE_STATUS:
                    break  # retrying would get the same answer
                if err.status_code in (429, 503):
                    wait = _retry_after_seconds(err.response.headers)
            except openai.APIError as err:
                reason = f"invalid response: {err}"
            if attempt + 1 == attempts:
                break
            wait = min(self.settings.max_wait, wait) if wait is not None else self._backoff(attempt)
            logger.warning(
                "%s: attempt %d/%d failed (%s); retrying in %.2f s",
                what,
                attempt + 1,
                attempts,
                self.redact(reason),
                wait,
            )
            time.sleep(wait)
        # Raised outside the except clauses, without a cause: the chained HTTP exchange would
        # carry the request headers, API key included.
        raise self._failure(what, reason, attempt + 1)

    def _send(self, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> ChatReply:
        """One request; the reply's first choice."""
        import openai

        with self._semaphore:
            start = time.monotonic()
            try:
                response = self._openai().chat.completions.create(
                    model=self.settings.model,
                    messages=list(messages),
                    **{"temperature": 0, **params},
                )
            except openai.APIError:
                raise
            except (ValueError, TypeError, AttributeError) as err:  # a body that is no completion
                raise ReplyError(f"the response is not a chat completion ({err})") from err
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            raise ReplyError("the reply has no message content")
        usage = getattr(response, "usage", None)
        return ChatReply(
            text=content,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            seconds=time.monotonic() - start,
        )

    def _failure(self, what: str, reason: str, attempts: int) -> LLMRequestError:
        plural = "s" if attempts != 1 else ""
        return self.failure(
            self.redact(
                f"{what} failed after {attempts} attempt{plural} "
                f"(model {self.settings.model!r} at {self.endpoint}): {reason}"
            )
        )

    def map(
        self, job: Callable[[R], T], items: Sequence[R], desc: str, progress: bool | None
    ) -> list[T | LLMRequestError]:
        """``job`` over ``items`` on up to ``concurrency`` threads, in order.

        An `LLMRequestError` raised by one job is returned in its place rather than raised, so
        the caller decides what a failure means.
        """

        def run(item: R) -> T | LLMRequestError:
            try:
                return job(item)
            except LLMRequestError as err:
                return err

        if not items:
            return []
        pool = ThreadPoolExecutor(max_workers=min(self.settings.concurrency, len(items)))
        try:
            results = list(
                progress_bar(pool.map(run, items), total=len(items), desc=desc, show=progress)
            )
        except BaseException:  # Ctrl-C, SIGTERM: no new request; those in flight are left
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return results


def _error_message(err: Any) -> str:
    """A short message from an HTTP error body (``{"error": {"message": ...}}``) or its text."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    message = str(getattr(err, "message", "") or err)
    return message[:300] if message else "no message"
