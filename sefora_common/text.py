"""The one text normalisation used to compare feedback units."""

from __future__ import annotations


def normalise(text: str) -> str:
    """``text`` case-folded with runs of whitespace collapsed to one space (ends stripped)."""
    return " ".join(text.casefold().split())
