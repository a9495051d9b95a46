"""The error UniMatch raises when a segmentation or scoring request cannot be completed."""

from __future__ import annotations

from sefora_dataset.errors import SeforaError


class UniMatchError(SeforaError):
    """A segmentation or similarity request that still failed after its retries.

    The message says which backend failed and why (HTTP status, timeout, malformed reply);
    it never contains an API key.
    """
