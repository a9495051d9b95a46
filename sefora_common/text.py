"""The one text normalisation used to compare feedback units, and the one check that a
text can be stored (encoded as UTF-8)."""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def normalise(text: str) -> str:
    """``text`` case-folded with runs of whitespace collapsed to one space (ends stripped)."""
    return " ".join(text.casefold().split())


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` as ``"U+D800"``, or None if there is none.

    JSON's ``"\\ud800"`` escape decodes to such a code point, which no UTF-8 file, Arrow
    column or cache key can hold (a paired ``"\\ud83d\\ude00"`` decodes to one character).
    """
    found = _LONE_SURROGATE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"
