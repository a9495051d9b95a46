"""The colour legend: which named highlight colour an RGB value stands for.

Instructors give highlight colours a meaning (SEFORA: pink = "great line", green =
"interesting, expand on this", yellow = "a problem in this sentence"). A highlight's colour
is recovered as RGB (rendered from a PDF, or read from a DOCX run) and mapped to the nearest
colour of the legend; a colour that is not close to any legend colour is ``generic``.

The default legend uses Word's highlighter swatches of those names (Word labels FF00FF
"Pink", 00FF00 "Bright Green", FFFF00 "Yellow"), with the softer variants PDF readers
offer for the same names. Palettes differ between instructors, so a legend can be loaded
from a JSON file mapping each name to one ``[r, g, b]`` triple (0-255) or to a list of
triples (several swatches that mean the same thing)::

    {"pink": [255, 105, 180], "green": [[0, 255, 0], [120, 220, 120]], "yellow": [255, 230, 0]}

Closeness is the CIE76 colour difference (Euclidean distance in CIELAB); ``max_distance``
(default 40) is the largest difference still counted as that legend colour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from sefora_common.jsonl import decode_json

from ..errors import SeforaError

GENERIC = "generic"

RGB = tuple[int, int, int]

DEFAULT_SWATCHES: dict[str, tuple[RGB, ...]] = {
    "pink": ((255, 0, 255), (255, 128, 192)),
    "green": ((0, 255, 0), (128, 224, 128)),
    "yellow": ((255, 255, 0), (255, 230, 80)),
}

DEFAULT_MAX_DISTANCE = 40.0


class LegendError(SeforaError):
    """A legend file that cannot be read or does not map names to RGB triples."""


def _srgb_to_linear(v: float) -> float:
    v = v / 255.0
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def rgb_to_lab(rgb: Iterable[float]) -> tuple[float, float, float]:
    """CIELAB (D65) coordinates of an sRGB colour given as 0-255 components."""
    r, g, b = (_srgb_to_linear(float(c)) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1.0 / 3.0) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(rgb1: Iterable[float], rgb2: Iterable[float]) -> float:
    """CIE76 colour difference between two sRGB colours."""
    return math.dist(rgb_to_lab(rgb1), rgb_to_lab(rgb2))


def _as_rgb(value: object, where: str) -> RGB:
    if (
        isinstance(value, (list, tuple))
        and len(value) == 3
        and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in value)
        and all(0 <= c <= 255 for c in value)
    ):
        return (int(round(value[0])), int(round(value[1])), int(round(value[2])))
    raise LegendError(f"{where}: expected [r, g, b] with components 0-255, got {value!r}")


class Legend:
    """Named colours, each with one or more RGB swatches; maps any RGB to a name."""

    def __init__(
        self,
        colours: Mapping[str, object] | None = None,
        max_distance: float = DEFAULT_MAX_DISTANCE,
    ) -> None:
        source = DEFAULT_SWATCHES if colours is None else colours
        if not source:
            raise LegendError("a legend needs at least one colour")
        self.swatches: dict[str, tuple[RGB, ...]] = {}
        for name, value in source.items():
            if not isinstance(name, str) or not name or name == GENERIC:
                raise LegendError(f"invalid colour name {name!r}")
            if (
                isinstance(value, (list, tuple))
                and value
                and all(isinstance(v, (list, tuple)) for v in value)
            ):
                triples = tuple(_as_rgb(v, name) for v in value)
            else:
                triples = (_as_rgb(value, name),)
            self.swatches[name] = triples
        self.max_distance = float(max_distance)
        self._labs = [
            (name, rgb_to_lab(rgb)) for name, rgbs in self.swatches.items() for rgb in rgbs
        ]
        self._cache: dict[RGB, str] = {}

    @classmethod
    def from_file(cls, path: str | Path) -> Legend:
        """Load ``{name: [r, g, b] | [[r, g, b], ...]}`` from a JSON file.

        An optional key ``"max_distance"`` (a number) sets the closeness threshold.
        """
        try:
            data, problems = decode_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise LegendError(f"{path}: cannot read legend: {err}") from err
        if problems:
            where, message = problems[0]
            raise LegendError(f"{path}: {where}: {message}")
        if not isinstance(data, dict):
            raise LegendError(f"{path}: a legend is a JSON object name -> [r, g, b]")
        data = dict(data)
        max_distance = data.pop("max_distance", DEFAULT_MAX_DISTANCE)
        if not isinstance(max_distance, (int, float)) or isinstance(max_distance, bool):
            raise LegendError(f"{path}: max_distance must be a number")
        try:
            return cls(data, max_distance=max_distance)
        except LegendError as err:
            raise LegendError(f"{path}: {err}") from err

    @property
    def names(self) -> list[str]:
        return list(self.swatches)

    def name_of(self, rgb: Iterable[float]) -> str:
        """The legend name nearest to ``rgb``, or ``generic`` when none is close enough."""
        key = tuple(int(round(c)) for c in rgb)
        if len(key) != 3:
            return GENERIC
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        lab = rgb_to_lab(key)
        best, best_d = GENERIC, math.inf
        for name, ref in self._labs:
            d = math.dist(lab, ref)
            if d < best_d:
                best, best_d = name, d
        result = best if best_d <= self.max_distance else GENERIC
        self._cache[key] = result
        return result

    def __repr__(self) -> str:
        return f"Legend({self.swatches!r}, max_distance={self.max_distance})"


DEFAULT_LEGEND = Legend()


def load_legend(legend: Legend | str | Path | Mapping[str, object] | None) -> Legend:
    """A Legend from a Legend, a JSON file path, a name -> RGB mapping, or None (default)."""
    if legend is None:
        return DEFAULT_LEGEND
    if isinstance(legend, Legend):
        return legend
    if isinstance(legend, (str, Path)):
        return Legend.from_file(legend)
    if isinstance(legend, Mapping):
        return Legend(legend)
    raise LegendError(f"cannot make a colour legend from {type(legend).__name__}")
