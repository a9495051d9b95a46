"""The learned segmenter: decides, at each candidate cut point (sentence and line ends,
connectives after punctuation, an unpunctuated "and" / "but" or opening bracket), whether
a new feedback unit starts, from the mean of two probabilities: gradient-boosted trees
over surface features of the pieces on each side and how they relate (a fix for the same
problem, a new quoted target, a run of questions, ...) and the kinds of the neighbouring
cuts; and a head over MiniLM token states on both sides of the cut (layers 2-4, which read
the whole text around it, layers 3-4 fine-tuned with the head on the labelled cuts) and
the mean states of the two pieces it separates. Fine-tuning replaced a logistic layer over
frozen states: in 5-fold train CV, the mean's boundary F1 rose from 0.734 to 0.763 on
instructor comments and from 0.906 to 0.913 on model-style feedback. The mean beat each
model alone and, before fine-tuning, trees stacked on the logistic layer's output (CV
WindowDiff 0.066 against 0.072-0.095). Instructor comments get their own threshold on
that probability, chosen by cross-validation: their units are shorter than those of
model-style feedback of the same length, and a shared threshold followed the far more
numerous feedback texts.

Deterministic and CPU-only; the trees, the tuned layers (fp16) and the head load from
``models/segmenter.npz`` (`unimatch_metric.training.train` fits them).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common.progress import progress_bar
from unimatch_metric.encoder import (
    import_torch,
    layer_states,
    load_embedding_model,
    run_layers,
    tuned_layers,
)
from unimatch_metric.errors import ModelFileError, UniMatchError
from unimatch_metric.features import (
    CATEGORY_CUES,
    QUOTED,
    UNIT_DIM,
    WORD,
    content_words,
    unit_features,
)
from unimatch_metric.models import SEGMENTER_FILE, load_model, model_namespace
from unimatch_metric.segmenters.base import Side, Units
from unimatch_metric.segmenters.rules import sentence_cuts
from unimatch_metric.trees import predict_proba

#: MiniLM layers whose token states on each side of a cut feed the segmenter's head: the
#: frozen layer 2, then layers 3 and 4, fine-tuned with the head (their weights and the
#: head's ship in the model file under these prefixes). Layers 2-4 were chosen with frozen
#: states and a logistic layer (5-fold train CV WindowDiff 0.072; the top layer 0.090, all
#: six 0.072 at twice the width).
CUT_LAYERS = (2, 3, 4)
LAYERS_PREFIX = "cut_layers."
HEAD_PREFIX = "cut_head."
#: Width of a cut's state row (`window_features`): three layers at two word pieces, the two
#: pieces' means and their product, of MiniLM-L6's 384 dimensions.
CUT_WIDTH = (2 * len(CUT_LAYERS) + 3) * 384
_BATCH = 64  # windows per encoder batch
#: Word pieces per encoder window (MiniLM's 256 positions minus [CLS] and [SEP]); longer
#: texts are read in half-overlapping windows, each cut from the window it is most central in.
_WINDOW = 254

_CONNECTIVES = (
    "but", "however", "although", "though", "also", "plus", "otherwise", "instead", "and",
    "so", "yet", "while", "because", "which", "then", "just", "maybe", "perhaps",
)  # fmt: skip
_CLAUSE_CUT = re.compile(
    r"(?:[,;:]|\s[-\u2013\u2014]+|\.\.\.)\s+(?=(?P<word>" + "|".join(_CONNECTIVES) + r")\b)?",
    flags=re.IGNORECASE,
)
#: Cuts the text gives no space for: a sentence end or a dash run straight into the next word
#: ("etc...I'm", "Nice--I wonder", "bedroom?So"), where annotators still start a unit.
_JOINED_CUT = re.compile(r"(?<=\w\w)(?:[.!?]+|\u2026|--|[\u2013\u2014])(?=[A-Za-z])")
#: Cuts with no punctuation at all: before a lower-case "and" / "but" after a word, a quote
#: or a bracket ("Please address counterarguments and offer your solutions", "I liked this
#: addition but wanted ...") and before an opening bracket ("... the game (although I
#: confess ..."). Of the 1,407 boundaries of the instructor-side training texts, 117 had no
#: candidate cut before these were added, 21 have none now.
_UNPUNCTUATED_CUT = re.compile(
    r"(?<=[\w\"'\u201d\u2019)\]])\s+(?=\((?=\w)|(?P<word>and|but)\b(?![/-]))"
)
#: "and" / "but" opening a piece, read past where the piece's opening matters.
_LEADING_AND_BUT = re.compile(r"^(?:and|but)\b[\s,]*", re.IGNORECASE)
_CUT_KINDS = (
    "newline", "period", "exclaim", "question", "comma", "semicolon", "colon", "dash",
    "unpunctuated",
)  # fmt: skip
# cut kind, connective, bare punctuation, both pieces, question run, shared cues, relation
# (13), bullet, lower-case start, no space at the cut, list layout, position from each end,
# context (12)
_CUT_DIM = len(_CUT_KINDS) + len(_CONNECTIVES) + 1 + 2 * UNIT_DIM + 1 + len(CATEGORY_CUES) + 31
# the kind of the previous and the next cut, whether it has a connective, whether it exists
_NEIGHBOUR_DIM = 2 * (len(_CUT_KINDS) + 2)
#: Length of `segmenter_features`' rows (the last column: the text is an instructor comment).
SEG_DIM = _CUT_DIM + _NEIGHBOUR_DIM + 1


def candidate_cuts(text: str) -> list[tuple[int, str, str]]:
    """Candidate unit boundaries: (offset, kind, connective word or "") in text order.

    Offsets are where the next piece starts (after the whitespace following the cut).
    """
    found: dict[int, tuple[str, str]] = {}
    for cut in sentence_cuts(text):
        before = text[:cut].rstrip()
        if text[cut - 1 : cut] == "\n":
            kind = "newline"
        elif before.endswith("?"):
            kind = "question"
        else:
            kind = "exclaim" if before.endswith("!") else "period"
        found[cut] = (kind, "")
    for m in _CLAUSE_CUT.finditer(text):
        head = m.group().strip()[:1]
        kind = {",": "comma", ";": "semicolon", ":": "colon", ".": "period"}.get(head, "dash")
        found.setdefault(m.end(), (kind, (m.group("word") or "").lower()))
    for m in _UNPUNCTUATED_CUT.finditer(text):
        found.setdefault(m.end(), ("unpunctuated", m.group("word") or ""))
    for m in _JOINED_CUT.finditer(text):
        head = m.group()[-1]
        kind = {"?": "question", "!": "exclaim", ".": "period", "\u2026": "period"}.get(
            head, "dash"
        )
        found.setdefault(m.end(), (kind, ""))
    out: list[tuple[int, str, str]] = []
    for offset, (kind, word) in sorted(found.items()):
        start = offset + len(text[offset:]) - len(text[offset:].lstrip())
        previous = out[-1][0] if out else 0
        # Each piece must hold a word: no cut inside a bullet marker or at the very ends.
        if start >= len(text) or start == previous or not WORD.search(text[previous:start].lower()):
            continue
        out.append((start, kind, word))
    # ... and so must the last piece, past a leading "and" / "but" ("nice work and").
    while out and not WORD.search(_LEADING_AND_BUT.sub("", text[out[-1][0] :].lower())):
        out.pop()
    return out


def _pieces(text: str, cuts: Sequence[int]) -> list[str]:
    """The stripped pieces of ``text`` between the cut offsets."""
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in zip(bounds, bounds[1:], strict=False)]


_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(add|cut|try|consider|name|cite|make|use|keep|check|fix|attach|end|start|"
    r"say|explain|describe|vary|decide|replace|remove|move|show|tell|give|clarify|expand|"
    r"think|avoid|combine|split|watch|look|let's|delete|rewrite|reread|revise|include|focus|"
    r"develop|define|connect|trim|tighten|drop|change|spell|capitalize|ask|be|don't|do|"
    r"address|offer|share|format|follow|provide|support)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"^(it|this|that|these|those|they|he|she|which|here|there|as)\b", re.I)
_OPEN_QUOTE = re.compile(r"^[\"\u201c\u2018(]")
#: Openers of a piece that usually starts another point, or goes on with the same one.
_NEW_POINT = re.compile(
    r"^(also|another|next|finally|first|second|third|lastly|one|two|three|other|additionally|"
    r"in addition|on another note|separately|overall|last)\b",
    re.IGNORECASE,
)
_SAME_POINT = re.compile(
    r"^(for example|for instance|e\.g\.|i\.e\.|instead|so|that way|otherwise|because|which|"
    r"this|that|it|then|as a result|in other words|specifically|rather|or|here|like|even|"
    r"especially|that's|this is|it's|there)\b",
    re.IGNORECASE,
)
#: Polarity cues: praise before a cut and criticism after it often belong to separate units.
_PRAISE = re.compile(
    r"\b(great|good|nice|love|like|strong|excellent|well|wonderful|effective|vivid|interesting|"
    r"beautiful|powerful|fun|enjoy|impressive|compelling|works)\b",
    re.IGNORECASE,
)
_CRITICISM = re.compile(
    r"\b(but|however|unclear|confus\w*|vague|wrong|error|missing|needs?|should|could|awkward|"
    r"not|doesn't|don't|isn't|lacks?|repeats?|too)\b",
    re.IGNORECASE,
)


def _relation_features(left: str, right: str, kind: str) -> list[float]:
    """How the piece after a cut relates to the piece before it (its opening read past a
    leading "and" / "but": "and address counterarguments" opens with a request)."""
    lw, rw = content_words(left), content_words(right)
    overlap = len(lw & rw) / max(1, min(len(lw), len(rw)))
    lq, rq = set(QUOTED.findall(left)), set(QUOTED.findall(right))
    opening = _LEADING_AND_BUT.sub("", right, count=1)
    imperative, pronoun = bool(_IMPERATIVE.match(opening)), bool(_PRONOUN.match(opening))
    quote_start = bool(_OPEN_QUOTE.match(opening))
    sentence = kind in ("period", "exclaim", "question", "semicolon")
    return [
        float(imperative),
        float(pronoun),
        float(quote_start),
        float(bool(_IMPERATIVE.match(left))),
        float(bool(lq)),
        float(bool(rq)),
        float(bool(lq & rq)),
        overlap,
        float(left.rstrip().endswith(":")),
        float(sentence and imperative),
        float(sentence and pronoun),
        float(sentence and quote_start),
        float(sentence) * overlap,
    ]


def _context_features(text: str, pieces: Sequence[str], i: int) -> list[float]:
    """How the piece after cut ``i`` relates to the text around the cut: its opener, quotes and
    words shared with earlier pieces or the next one, a turn from praise to criticism."""
    left, right = pieces[i], pieces[i + 1]
    quotes = [{q.lower() for q in QUOTED.findall(p)} for p in pieces[: i + 2]]
    earlier_quotes = set().union(*quotes[: i + 1])
    lw, rw = content_words(left), content_words(right)
    nearby = lw | (content_words(pieces[i - 1]) if i else set())
    next_words = content_words(pieces[i + 2]) if i + 2 < len(pieces) else set()
    praise, criticism = bool(_PRAISE.search(left)), bool(_CRITICISM.search(right))
    return [
        float(bool(_NEW_POINT.match(right))),
        float(bool(_SAME_POINT.match(right))),
        float(bool(quotes[i + 1] & earlier_quotes)),
        float(bool(quotes[i + 1]) and not quotes[i + 1] & earlier_quotes),
        len(rw & nearby) / max(1, len(rw)),
        len(rw & lw) / max(1, len(rw | lw)),
        float(praise and not _CRITICISM.search(left)),  # praise only
        float(criticism),
        float(praise and criticism),
        len(rw & next_words) / max(1, len(rw)),
        math.log1p(len(text.split())),
        math.log1p(len(pieces) - 1),
    ]


def segmenter_features(text: str, side: Side = "feedback") -> np.ndarray:
    """One feature row per candidate cut of ``text`` (see `candidate_cuts`), with the kinds
    of the neighbouring cuts and the ``side`` the text comes from (instructors cut short
    comments by point where feedback texts of the same length often hold one)."""
    cuts = candidate_cuts(text)
    pieces = _pieces(text, [c[0] for c in cuts])
    listed = float("\n" in text.strip())
    rows = []
    for i, (offset, kind, word) in enumerate(cuts):
        left, right = pieces[i], pieces[i + 1]
        lf, rf = unit_features(left), unit_features(right)
        rows.append(
            [
                *(1.0 if kind == k else 0.0 for k in _CUT_KINDS),
                *(1.0 if word == w else 0.0 for w in _CONNECTIVES),
                1.0 if not word and kind in ("comma", "colon", "dash", "semicolon") else 0.0,
                *lf,
                *rf,
                lf[7] * rf[7],  # a run of questions
                *(a * b for a, b in zip(lf[:7], rf[:7], strict=True)),
                *_relation_features(left, right, kind),
                1.0 if re.match(r"^\s*(?:[-*\u2022]|\d+[.)])", right) else 0.0,
                1.0 if right[:1].islower() else 0.0,
                0.0 if text[offset - 1].isspace() else 1.0,  # "bedroom?So": pasted comments
                listed,
                math.log1p(i),
                math.log1p(len(cuts) - i - 1),
                *_context_features(text, pieces, i),
            ]
        )
    own = np.asarray(rows, dtype=np.float64).reshape(len(rows), _CUT_DIM)
    # Each cut's kind, connective and presence, seen from the cut before and the cut after.
    kinds = len(_CUT_KINDS)
    cut = np.hstack(
        [
            own[:, :kinds],
            own[:, kinds : kinds + len(_CONNECTIVES)].sum(axis=1, keepdims=True),
            np.ones((len(rows), 1)),
        ]
    )
    none = np.zeros((1, cut.shape[1]))
    previous, following = np.vstack([none, cut])[:-1], np.vstack([cut, none])[1:]
    instructor = np.full((len(rows), 1), 1.0 if side == "instructor" else 0.0)
    return np.hstack([own, previous, following, instructor])


def windows(n: int) -> list[int]:
    """Start offsets of the encoder windows over ``n`` word pieces."""
    if n <= _WINDOW:
        return [0]
    starts = list(range(0, n - _WINDOW, _WINDOW // 2))
    return [*starts, n - _WINDOW]


@dataclass(frozen=True)
class CutWindow:
    """One encoder window over a text and the candidate cuts read in it.

    ``ids`` are its word pieces between [CLS] and [SEP]; each of ``cuts`` is (row of the cut
    in `candidate_cuts` of text ``text``, its first word piece after the cut, the start of
    the piece before it, the end of the piece after it), indices into the window's pieces.
    ``text_index`` is the text's position in the list the windows were made from.
    """

    text_index: int
    ids: list[int]
    cuts: list[tuple[int, int, int, int]]


def cut_windows(texts: Sequence[str]) -> list[CutWindow]:
    """The encoder windows that hold the candidate cuts of ``texts``: each cut is read in the
    window it is most central in, its pieces clipped to that window (windows without a cut
    are left out)."""
    tokenizer = load_embedding_model().tokenizer
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    out = []
    for t, text in enumerate(texts):
        enc = tokenizer(  # no length warning: long texts are read in windows
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets, n = [a for a, _ in enc["offset_mapping"]], len(enc["input_ids"])
        starts = windows(n)
        cuts = [c for c, _, _ in candidate_cuts(text)]
        at = [next((k for k, a in enumerate(offsets) if a >= c), n - 1) for c in cuts]
        bounds = [0, *at, n]
        jobs: dict[int, list[tuple[int, int, int, int]]] = {}
        for row, j in enumerate(at):
            w = max(starts, key=lambda s: min(j - s, s + _WINDOW - j))
            inside = (max(bounds[row], w), min(bounds[row + 2], w + _WINDOW))
            jobs.setdefault(w, []).append((row, j - w, inside[0] - w, inside[1] - w))
        for w, read in jobs.items():
            out.append(CutWindow(t, [cls, *enc["input_ids"][w : w + _WINDOW], sep], read))
    return out


def frozen_states(found: Sequence[CutWindow]) -> list[Any]:
    """Token states of each window after MiniLM's frozen layers (up to the first of
    `CUT_LAYERS`), one (tokens, 384) tensor each, [CLS] and [SEP] included."""
    torch = import_torch()
    model = load_embedding_model()
    bert, pad = model[0].auto_model, model.tokenizer.pad_token_id
    out: list[Any] = [None] * len(found)
    order = sorted(range(len(found)), key=lambda k: -len(found[k].ids))  # little padding
    with torch.inference_mode():
        for b in range(0, len(order), _BATCH):
            batch = order[b : b + _BATCH]
            lengths = torch.tensor([len(found[k].ids) for k in batch])
            mask = (torch.arange(int(lengths.max()))[None, :] < lengths[:, None]).long()
            input_ids = torch.full(mask.shape, pad)
            for r, k in enumerate(batch):
                input_ids[r, : len(found[k].ids)] = torch.tensor(found[k].ids)
            [h] = layer_states(bert, input_ids, mask, [CUT_LAYERS[0]])
            for r, k in enumerate(batch):
                out[k] = h[r, : len(found[k].ids)].clone()
    return out


def window_features(layers: Any, batch: Sequence[CutWindow], states: Sequence[Any]) -> Any:
    """The cut states of a batch of windows, one row per cut (windows in order, each one's
    cuts in order): at layers `CUT_LAYERS` (the frozen states, then those of the tuned
    ``layers``), the first word piece after the cut and the last one before it; then, at the
    top layer, the mean state of the piece before the cut, of the piece after it and their
    product, which says whether the two pieces make one point. Differentiable in ``layers``.
    """
    torch = import_torch()
    outs, _ = run_layers(layers, states)
    rows, after_cut, spans = [], [], []
    for r, window in enumerate(batch):
        for _, j, before, after in window.cuts:  # +1: the window's [CLS]
            rows.append(r)
            after_cut.append(j + 1)
            spans.append((before + 1, j + 1, after + 1))
    rows_t, at = torch.tensor(rows), torch.tensor(after_cut)
    lo, mid, hi = (torch.tensor([s[k] for s in spans]) for k in range(3))
    # Running sums of the top states (0 before the first piece): a span's sum is the
    # difference of two of them, without a (cuts x pieces x 384) copy of the states.
    top = outs[-1]
    sums = torch.cat([top.new_zeros(top.shape[0], 1, top.shape[2]), top.cumsum(1)], dim=1)
    means = [
        (sums[rows_t, b] - sums[rows_t, a]) / (b - a).clamp(min=1)[:, None].to(top.dtype)
        for a, b in ((lo, mid), (mid, hi))
    ]
    return torch.cat(
        [
            *(o[rows_t, at] for o in outs),
            *(o[rows_t, at - 1] for o in outs),
            means[0],
            means[1],
            means[0] * means[1],
        ],
        dim=-1,
    )


def cut_states(layers: Any, texts: Sequence[str], progress: bool | None = None) -> list[np.ndarray]:
    """The cut states (`window_features`) of each candidate cut of each text, rows following
    `candidate_cuts`, under the tuned ``layers``; a `progress_bar` counts the windows."""
    torch = import_torch()
    found = cut_windows(texts)
    counts = np.zeros(len(texts), dtype=int)  # every cut is read in exactly one window
    for w in found:
        counts[w.text_index] += len(w.cuts)
    out = [np.zeros((n, CUT_WIDTH), dtype=np.float32) for n in counts]
    order = sorted(range(len(found)), key=lambda k: -len(found[k].ids))  # little padding
    with (
        progress_bar(total=len(order), desc="segmenting", unit="window", show=progress) as bar,
        torch.inference_mode(),
    ):
        for b in range(0, len(order), _BATCH):
            batch = [found[k] for k in order[b : b + _BATCH]]
            features = window_features(layers, batch, frozen_states(batch)).numpy()
            rows = [(w.text_index, row) for w in batch for row, *_ in w.cuts]
            for (t, row), x in zip(rows, features, strict=True):
                out[t][row] = x
            bar.update(len(batch))
    return out


def cut_head(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The fine-tuned head's probability for each row of cut states."""
    z = x @ model[HEAD_PREFIX + "weight"].astype(np.float32) + float(model[HEAD_PREFIX + "bias"])
    return 1.0 / (1.0 + np.exp(-z))


def cut_probabilities(
    model: dict[str, np.ndarray],
    layers: Any,
    texts: Sequence[str],
    side: Side = "feedback",
    progress: bool | None = None,
) -> list[np.ndarray]:
    """The probability that a unit starts at each candidate cut of each text (all on one
    ``side``): the mean of the trees' over `segmenter_features` and the fine-tuned head's
    over `cut_states` (of the model's tuned ``layers``)."""
    surface = [segmenter_features(t, side) for t in texts]
    return mean_probabilities(model, surface, cut_states(layers, texts, progress))


def mean_probabilities(
    model: dict[str, np.ndarray], surface: Sequence[np.ndarray], states: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """The mean of the trees' and the head's probabilities, text by text."""
    trees = predict_proba(model, np.vstack([np.zeros((0, SEG_DIM)), *surface]))
    bounds = np.cumsum([0, *(len(x) for x in surface)])
    return [
        (trees[a:b] + cut_head(model, x)) / 2
        for a, b, x in zip(bounds, bounds[1:], states, strict=False)
    ]


def cut_units(text: str, accept: Sequence[bool] | np.ndarray) -> list[str]:
    """The units of ``text`` cut at the accepted candidate cuts."""
    keep = [c[0] for c, ok in zip(candidate_cuts(text), accept, strict=True) if ok]
    return [piece for piece in _pieces(text, keep) if piece]


def cut_threshold(model: dict[str, np.ndarray], side: Side) -> float:
    """The probability above which a candidate cut starts a unit in a text of ``side``."""
    return float(model["cut_at_instructor" if side == "instructor" else "cut_at"])


def cut_layers(weights: dict[str, np.ndarray] | None = None) -> Any:
    """A copy of the MiniLM layers the segmenter tunes (those of `CUT_LAYERS` above the
    first), with ``weights`` loaded when given (`unimatch_metric.encoder.tuned_layers`)."""
    return tuned_layers(CUT_LAYERS[0], CUT_LAYERS[-1], weights)


@functools.lru_cache(maxsize=4)
def segmenter_layers(path: Path) -> Any:
    """The fine-tuned layers of the segmenter file at ``path`` (built once); a file without
    them or its head, as made before they were fine-tuned, is a `ModelFileError`."""
    model = load_model(path)
    weights = {k[len(LAYERS_PREFIX) :]: v for k, v in model.items() if k.startswith(LAYERS_PREFIX)}
    head = model.get(HEAD_PREFIX + "weight")
    if head is None or head.shape != (CUT_WIDTH,) or HEAD_PREFIX + "bias" not in model:
        raise ModelFileError(
            f"learned segmenter file {path} has no fine-tuned head of {CUT_WIDTH} weights "
            "(an older model?): retrain it with `sefora train-offline`"
        )
    try:
        return cut_layers(weights)
    except RuntimeError as err:  # missing or misshapen layer arrays
        raise ModelFileError(
            f"learned segmenter file {path} has no complete fine-tuned cut layers "
            f"(an older model?): retrain it with `sefora train-offline` ({err})"
        ) from err


def segment_with(
    model: dict[str, np.ndarray],
    layers: Any,
    texts: Sequence[str],
    progress: bool | None = None,
    side: Side = "feedback",
) -> list[list[str]]:
    """The units of ``texts`` (all on one ``side``) under segmenter ``model`` and its tuned
    ``layers`` (`cut_layers`)."""
    threshold = cut_threshold(model, side)
    probabilities = cut_probabilities(model, layers, texts, side, progress)
    return [cut_units(text, p > threshold) for text, p in zip(texts, probabilities, strict=True)]


class LearnedSegmenter:
    """Boundary classifier over candidate cuts (``models/segmenter.npz``; results cached)."""

    name = "learned"
    sided = True

    def __init__(self, path: Path = SEGMENTER_FILE, progress: bool | None = None) -> None:
        self.model = load_model(path)
        self.layers = segmenter_layers(path)
        self.cache_namespace = model_namespace("segment", path)
        self.progress = progress

    @property
    def config(self) -> dict[str, Any]:
        """The learned segmenter, its embedding model and the digest of its model file."""
        return {
            "model": "learned-segmenter",
            "embedding": "all-MiniLM-L6-v2, layers 3-4 fine-tuned",
            "digest": self.cache_namespace[-1],
        }

    def segment(self, texts: Sequence[str], side: Side = "feedback") -> list[Units | UniMatchError]:
        """Cut each text at the candidates the classifier accepts, with the threshold of
        ``side`` (one batched prediction)."""
        return list(segment_with(self.model, self.layers, texts, self.progress, side))
