"""Retraining the learned offline backends from the project's guideline-labelled data
(``labels/``): the segmenter's trees and its fine-tuned MiniLM layers and head, the
scorer's fine-tuned MiniLM top layers and trees, the grounding trees; saved as ``.npz``
arrays with reference outputs for the reproducibility test. ``sefora train-offline`` runs
`train_offline`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common import jsonl
from sefora_common.io import write_bytes, write_text
from sefora_common.progress import progress_bar
from unimatch_metric.encoder import TunedEncoder, layer_weights
from unimatch_metric.errors import UniMatchInputError
from unimatch_metric.grounding import (
    feedback_vocabulary,
    grounding_features,
    off_units,
    text_log_odds,
)
from unimatch_metric.models import (
    GROUNDING_FILE,
    MODEL_DIR,
    REFERENCE_FILE,
    SCORER_FILE,
    SEGMENTER_FILE,
    load_model,
)
from unimatch_metric.scorers.learned import (
    TUNED_PREFIX,
    pair_features,
    predict_score,
    tuned_encoder,
)
from unimatch_metric.segmenters.base import Side
from unimatch_metric.segmenters.learned import (
    LAYERS_PREFIX,
    candidate_cuts,
    cut_states,
    cut_units,
    cut_windows,
    frozen_states,
    mean_probabilities,
    segment_with,
    segmenter_features,
    segmenter_layers,
)
from unimatch_metric.training.finetune import FIT_PARAMS, fine_tune, fine_tune_cuts
from unimatch_metric.training.trees import fit_trees
from unimatch_metric.training.validate import (
    SegmentationAgreement,
    score_agreement,
    segmentation_agreement,
    segmenter_validation,
    side_of,
)
from unimatch_metric.trees import predict_proba

#: Deeper, longer boosting for the segmenter than the shared default, chosen by 5-fold CV
#: on the train part of label batches 1-2 (WindowDiff 0.0985 with depth 3 / 200 trees,
#: 0.0946 with these).
SEGMENTER_TREES = {"n_estimators": 400, "max_depth": 6}
#: Folds (grouped by paragraph) of the cross-validation that chooses the segmenter's
#: thresholds: each fold's texts are cut by trees and fine-tuned layers trained without
#: them. Two, so that retraining stays within its budget: every fold fine-tunes MiniLM
#: layers, and with three, on 6,560 texts and 18,320 pairs, retraining took 15:01.
SEGMENTER_FOLDS = 2
#: Weight of an instructor comment's cuts in the segmenter's fit. Comments are short, so at
#: weight 1 their cuts are a fifth of the rows and the model follows feedback texts' habits.
#: 5-fold train CV boundary F1, comments / feedback texts (before the terse comments were
#: labelled): weight 1 0.692 / 0.908, 3 0.701 / 0.905, 5 0.701 / 0.904.
INSTRUCTOR_WEIGHT = 3.0
#: Folds (grouped by paragraph) whose held-out features train the scorer's trees. With
#: random fine-tuning batches, three folds gave validation Pearson / Spearman 0.802 / 0.780
#: against 0.795 / 0.775 for two, but 17 minutes of retraining, over budget; with batches
#: keeping each paragraph's pairs together (`paragraph_batches`, 11,411 pairs), three folds
#: gave 0.808 / 0.774 against 0.816 / 0.785 for two.
SCORER_FOLDS = 2
#: The labelled paragraphs (their texts train the grounding model), under the labels folder.
PARAGRAPHS = Path("material") / "paragraphs.jsonl"
#: Candidate text log-odds under which grounding sets aside a whole feedback text
#: (`_text_below`), and the share of texts written for their paragraph it may set aside.
TEXT_BELOW = (-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -8.0, -10.0)
TEXT_FALSE_OFF = 0.005
#: Candidate scores under which the learned scorer says 0 (`_zero_below`).
ZERO_BELOW = (0.0, 0.25, 0.5, 0.75, 1.0)


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


def read_labels(path: Path) -> list[dict]:
    """The objects of a labelled JSONL file (a bad line is a `UniMatchInputError` naming it)."""
    return [row for _, row in jsonl.read_jsonl(path, UniMatchInputError)]


def read_paragraphs(path: Path) -> dict[str, str]:
    """``item_id`` -> paragraph text (``body``) of the labelled data's paragraphs file."""
    bodies = {}
    for line, row in jsonl.read_jsonl(path, UniMatchInputError):
        if not isinstance(row.get("item_id"), str) or not isinstance(row.get("body"), str):
            raise UniMatchInputError(path, f"line {line}", "expected 'item_id' and 'body' strings")
        bodies[row["item_id"]] = row["body"]
    return bodies


def _folds(groups: Sequence[str] | np.ndarray, k: int) -> np.ndarray:
    """Fold index (0..k-1) of each row, keeping every group in one fold (deterministic)."""
    order = sorted(set(groups))
    fold_of = {g: i % k for i, g in enumerate(order)}
    return np.asarray([fold_of[g] for g in groups])


def _save(arrays: dict[str, np.ndarray], path: Path) -> None:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # names -> arrays
    write_bytes(path, buffer.getvalue())


def pair_label(row: dict) -> float:
    """The label of a pair: the mean of its annotators' scores."""
    scores = [row["score"], *([row["score_2"]] if "score_2" in row else [])]
    return sum(scores) / len(scores)


def _write_reference(
    segments: list[dict],
    pairs: list[dict],
    models: tuple[dict, dict, dict],
    seg_layers: Any,
    encoder: TunedEncoder,
    bodies: Mapping[str, str],
    out_dir: Path,
) -> None:
    """Outputs of the new models on a few labelled inputs, for the reproducibility test:
    segmentations, pair scores and the grounding of feedback texts' units, each against its
    own paragraph and against the next text's paragraph."""
    seg_model, score_model, ground_model = models
    texts = [r["text"] for r in segments[:20]]
    probe = [(r["a"], r["b"]) for r in pairs[:40]]
    first: dict[str, dict] = {}  # the first feedback text of each paragraph, for four paragraphs
    for r in segments:
        if side_of(r) == "feedback" and r["item_id"] in bodies and len(first) < 4:
            first.setdefault(r["item_id"], r)
    feedback = list(first.values())
    grounding = [
        (r["units"], bodies[other["item_id"]])
        for k, r in enumerate(feedback)
        for other in (r, feedback[(k + 1) % len(feedback)])
    ]
    vocabulary = frozenset(ground_model["vocabulary"].tolist())
    reference = {
        "texts": texts,
        "units": segment_with(seg_model, seg_layers, texts),
        "pairs": probe,
        "scores": predict_score(score_model, pair_features(probe, encoder)).tolist(),
        "grounding": [
            {
                "units": units,
                "paragraph": paragraph,
                "probabilities": predict_proba(
                    ground_model, grounding_features(units, paragraph, vocabulary)
                ).tolist(),
            }
            for units, paragraph in grounding
        ],
    }
    write_text(out_dir / REFERENCE_FILE.name, json.dumps(reference, ensure_ascii=False, indent=1))


def _fit_scorer(
    pair_train: list[dict], progress: bool | None, fit_params: Mapping[str, Any]
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
    items = np.asarray([r["item_id"] for r in pair_train])
    states = TunedEncoder().bottom_states(texts)
    fold = _folds(items, SCORER_FOLDS)
    parts = []
    for f in range(SCORER_FOLDS):
        inside, held = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        encoder = TunedEncoder()
        fine_tune(
            encoder,
            states,
            [index[i] for i in inside],
            y[inside],
            items[inside],
            progress,
            fit_params,
        )
        parts.append((held, pair_features([pairs[i] for i in held], encoder)))
    x = np.zeros((len(pairs), parts[0][1].shape[1]))
    for held, features in parts:
        x[held] = features
    encoder = TunedEncoder()
    fine_tune(encoder, states, index, y, items, progress, fit_params)
    model = {
        **fit_trees(x, y, False),
        "zero_below": np.asarray(_zero_below(x, y, fold)),
        **{TUNED_PREFIX + k: v for k, v in encoder.weights().items()},
    }
    return model, encoder


def _zero_below(x: np.ndarray, y: np.ndarray, fold: np.ndarray) -> float:
    """The score under which the scorer says 0: the one of `ZERO_BELOW` whose out-of-fold
    predictions (trees fitted without the fold) have the highest Spearman correlation with
    the labels. Most labels are 0, and a regression spreads them over low values."""
    oof = np.zeros(len(y))
    for f in range(SCORER_FOLDS):
        inside, held = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        oof[held] = predict_score(fit_trees(x[inside], y[inside], False), x[held])
    spearman = {
        t: score_agreement(list(y), np.where(oof < t, 0.0, oof)).spearman for t in ZERO_BELOW
    }
    return max(ZERO_BELOW, key=lambda t: (spearman[t], -t))


def _grounding_examples(
    texts: list[dict], bodies: Mapping[str, str]
) -> list[tuple[list[str], str, float]]:
    """(units, paragraph, label) for each feedback text: with the paragraph it was written
    for (1) and with the paragraph half the sorted list of its paragraphs away (0)."""
    items = sorted({r["item_id"] for r in texts})
    other = {item: items[(k + len(items) // 2) % len(items)] for k, item in enumerate(items)}
    return [
        (r["units"], bodies[item], label)
        for r in texts
        for item, label in ((r["item_id"], 1.0), (other[r["item_id"]], 0.0))
    ]


def _grounding_trees(
    examples: Sequence[tuple[list[str], str, float]], known: frozenset[str]
) -> dict[str, np.ndarray]:
    """Grounding trees fitted on the units of ``examples`` (`_grounding_examples`)."""
    x = np.vstack([grounding_features(u, b, known) for u, b, _ in examples])
    y = np.concatenate([np.full(len(u), label) for u, _, label in examples])
    return fit_trees(x, y, True)


def _text_below(
    examples: Sequence[tuple[list[str], str, float]], items: Sequence[str], known: frozenset[str]
) -> float:
    """The highest of `TEXT_BELOW` that sets aside at most `TEXT_FALSE_OFF` of the texts
    with their own paragraph, by 5-fold cross-validation over the training texts (grouped by
    paragraph; ``items`` names each example's text's paragraph). Setting aside feedback on
    this paragraph costs its whole credit, keeping feedback on another only its generic
    matches, hence the small budget."""
    fold = _folds(items, 5)
    own: list[float] = []
    for f in range(5):
        model = _grounding_trees([e for e, k in zip(examples, fold, strict=True) if k != f], known)
        own += [
            text_log_odds(predict_proba(model, grounding_features(units, body, known)))
            for (units, body, label), k in zip(examples, fold, strict=True)
            if k == f and label == 1.0
        ]
    allowed = [t for t in TEXT_BELOW if np.mean(np.asarray(own) < t) <= TEXT_FALSE_OFF]
    return max(allowed, default=min(TEXT_BELOW))


def _fit_grounding(
    seg_train: list[dict], seg_val: list[dict], bodies: Mapping[str, str], labels_dir: Path
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Fit the grounding trees on `_grounding_examples` of the training feedback texts and
    choose their ``text_below`` (`_text_below`); report, on the validation ones, the share
    of units zeroed against their own paragraph and against another, and of whole texts.

    The labels are which paragraph a text was written for, a fact of how the data was made,
    not a judgement: a generic unit ("Nice work.") fits both and is left near 0.5.
    """
    train, val = ([r for r in rows if side_of(r) == "feedback"] for rows in (seg_train, seg_val))
    missing = sorted({r["item_id"] for r in train + val} - set(bodies))
    if missing:
        raise UniMatchInputError(
            labels_dir / PARAGRAPHS, missing[0], "no paragraph with this item_id"
        )
    texts_of: dict[str, list[str]] = {}  # item -> its feedback texts
    for r in train:
        texts_of.setdefault(r["item_id"], []).append(r["text"])
    if len(texts_of) < 2:
        raise UniMatchInputError(
            labels_dir / "segments.jsonl",
            "item_id",
            "grounding needs training feedback texts (source 'model') of two paragraphs",
        )
    vocabulary = feedback_vocabulary(list(texts_of.values()))
    known = frozenset(vocabulary.tolist())
    examples = _grounding_examples(train, bodies)
    items = [r["item_id"] for r in train for _ in range(2)]  # as `_grounding_examples` pairs
    text_below = _text_below(examples, items, known)
    model = {
        **_grounding_trees(examples, known),
        "vocabulary": vocabulary,
        "text_below": np.asarray(text_below),
    }
    report: dict[str, Any] = {
        "train_units": sum(len(u) for u, _, label in examples if label == 1.0),
        "text_below": text_below,
    }
    if len({r["item_id"] for r in val}) >= 2:
        zeroed: dict[float, list[bool]] = {1.0: [], 0.0: []}
        whole: dict[float, list[bool]] = {1.0: [], 0.0: []}
        for units, body, label in _grounding_examples(val, bodies):
            p = predict_proba(model, grounding_features(units, body, known))
            zeroed[label] += list(off_units(p, text_below))
            whole[label].append(text_log_odds(p) < text_below)
        report["validation"] = {
            "units": len(zeroed[1.0]),
            "zeroed_own_paragraph": float(np.mean(zeroed[1.0])),
            "zeroed_other_paragraph": float(np.mean(zeroed[0.0])),
            "texts_set_aside_own_paragraph": float(np.mean(whole[1.0])),
            "texts_set_aside_other_paragraph": float(np.mean(whole[0.0])),
        }
    return model, report


def _fit_segmenter(
    seg_train: list[dict], cut_thresholds: Sequence[float], progress: bool | None
) -> tuple[dict[str, np.ndarray], Any, dict[str, Any]]:
    """Fit the trees and fine-tune MiniLM layers and a head on the cuts; choose a threshold
    on their mean probability for feedback texts and one for instructor comments by
    `SEGMENTER_FOLDS`-fold cross-validation (grouped by paragraph, lowest `_cut_error` of
    that side over its training texts; over all of them when the side has none). Returns
    the model's arrays, its tuned layers and a report with each side's curve."""
    texts = [r["text"] for r in seg_train]
    surface = [segmenter_features(r["text"], side_of(r)) for r in seg_train]
    ys = [gold_cut_labels(t, r["units"]) for t, r in zip(texts, seg_train, strict=True)]
    fold = _folds([r["item_id"] for r in seg_train], SEGMENTER_FOLDS)
    sides = [side_of(r) for r in seg_train]
    text_weight = [INSTRUCTOR_WEIGHT if s == "instructor" else 1.0 for s in sides]
    windows = cut_windows(texts)
    states = frozen_states(windows)

    def fit_trees_on(which: np.ndarray) -> dict[str, np.ndarray]:
        y = np.concatenate([ys[i] for i in which])
        if len(set(y)) < 2:
            raise UniMatchInputError(
                "segments.jsonl",
                "units",
                "the training texts of every fold need candidate cuts that "
                "start a unit and cuts that do not (label more multi-unit texts)",
            )
        w = np.concatenate([np.full(len(ys[i]), text_weight[i]) for i in which])
        x = np.concatenate([surface[i] for i in which])
        return fit_trees(x, y, True, weight=w, **SEGMENTER_TREES)

    def fit_cuts(which: np.ndarray) -> tuple[Any, dict[str, np.ndarray]]:
        inside = set(which.tolist())
        kept = [k for k, w in enumerate(windows) if w.text_index in inside]
        return fine_tune_cuts(
            [windows[k] for k in kept], [states[k] for k in kept], ys, text_weight, progress
        )

    parts = [np.flatnonzero(fold != f) for f in range(SEGMENTER_FOLDS)] + [np.arange(len(texts))]
    # The tree fits two at a time (scikit-learn's tree building releases the GIL), the fit
    # on all texts first: it takes about as long as the fold fits together, which run
    # beside it one after the other (folds first, 6,560 texts: 58 s for the three; the fit
    # on all first, 6,800 texts: 47 s).
    with ThreadPoolExecutor(max_workers=2) as pool:
        trees, *fold_trees = pool.map(fit_trees_on, parts[-1:] + parts[:-1])
    cv_hyps: dict[float, list] = {t: [None] * len(texts) for t in cut_thresholds}
    for f, fold_trees_f in enumerate(fold_trees):
        held = np.flatnonzero(fold == f)
        layers, head = fit_cuts(parts[f])
        probabilities = mean_probabilities(
            {**fold_trees_f, **head},
            [surface[i] for i in held],
            cut_states(layers, [texts[i] for i in held]),
        )
        for i, p in zip(held, probabilities, strict=True):
            for t in cut_thresholds:
                cv_hyps[t][i] = cut_units(texts[i], p > t)
    layers, head = fit_cuts(parts[-1])
    model = {
        **trees,
        **head,
        **{LAYERS_PREFIX + k: v for k, v in layer_weights(layers).items()},
    }
    report: dict[str, Any] = {"train_texts": len(texts)}
    keys: tuple[tuple[Side, str], ...] = (
        ("feedback", "cut_at"),
        ("instructor", "cut_at_instructor"),
    )
    for side, key in keys:
        own = [i for i, s in enumerate(sides) if s == side]
        rows = own or list(range(len(texts)))
        refs = [seg_train[i]["units"] for i in rows]
        cv = {t: segmentation_agreement(refs, [h[i] for i in rows]) for t, h in cv_hyps.items()}
        cut_at = min(cv, key=lambda t: (_cut_error(cv[t], side), t))
        model[key] = np.asarray(cut_at)
        report[key] = cut_at
        report[f"cv_{side}"] = {
            "texts": len(own),
            "window_diff": cv[cut_at].window_diff,
            "f1": cv[cut_at].f1,
            "by_threshold": {
                str(t): {"window_diff": a.window_diff, "f1": a.f1} for t, a in cv.items()
            },
        }
    return model, layers, {"segmenter": report}


def _cut_error(agreement: SegmentationAgreement, side: Side) -> float:
    """What a side's threshold minimises. Feedback texts: the mean of WindowDiff and 1 -
    boundary F1 (WindowDiff alone hardly moves on two-sentence texts while F1 halves).
    Instructor comments: 1 - boundary F1, their figure of merit. Most comments are one
    unit, so WindowDiff rewards leaving cuts out: with the mean, their threshold moved
    between 0.35 and 0.45 from one retraining to the next, though F1 peaked at 0.35 (over
    three folds of 4,176 comments: 0.803, against 0.793 at 0.45). F1's curve is flat too
    (two folds: within 0.006 from 0.35 to 0.50 after round 7), so its peak can still move
    between retrainings on new labels (0.40, then 0.45)."""
    if side == "instructor":
        return 1.0 - agreement.f1
    return (agreement.window_diff + 1.0 - agreement.f1) / 2


def train_offline(
    labels_dir: Path,
    out_dir: Path = MODEL_DIR,
    limit: int | None = None,
    cut_thresholds: Sequence[float] = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65),
    progress: bool | None = None,
    fit_params: Mapping[str, Any] = FIT_PARAMS,
) -> dict[str, Any]:
    """Fit the learned models (segmenter, scorer, grounding) on the ``train`` part of
    ``labels_dir`` (with the paragraphs of ``material/paragraphs.jsonl``) and save them.

    The segmenter's probability thresholds are chosen by `SEGMENTER_FOLDS`-fold
    cross-validation (see `_fit_segmenter`); figures on the held-out ``validation`` part
    (overall and per side) are returned. ``limit`` keeps only the first rows of each file
    (of each side, instructor comments and feedback, in ``segments.jsonl``) and
    ``fit_params`` replaces the scorer's fine-tuning recipe (`FIT_PARAMS`), both for quick
    checks; the defaults make the shipped models.
    """
    segments = read_labels(labels_dir / "segments.jsonl")
    if limit is not None:
        by_side: dict[str, list[dict]] = {"instructor": [], "feedback": []}
        for row in segments:
            by_side[side_of(row)].append(row)
        segments = by_side["instructor"][:limit] + by_side["feedback"][:limit]
    pairs = read_labels(labels_dir / "pairs.jsonl")[:limit]
    seg_train = [r for r in segments if r["part"] == "train"]
    seg_val = [r for r in segments if r["part"] == "validation"]
    pair_train = [r for r in pairs if r["part"] == "train"]
    pair_val = [r for r in pairs if r["part"] == "validation"]
    if not seg_train or not pair_train:
        raise UniMatchInputError(
            labels_dir, "part", "no training rows (part == 'train') to learn from"
        )
    if len({r["item_id"] for r in pair_train}) < SCORER_FOLDS:
        raise UniMatchInputError(
            "pairs.jsonl",
            "item_id",
            f"training pairs must come from at least {SCORER_FOLDS} paragraphs",
        )
    bodies = read_paragraphs(labels_dir / PARAGRAPHS)
    steps = progress_bar(total=4, desc="Training offline models", show=progress)

    # First: the quickest, and it checks its inputs before the long fits.
    ground_model, ground_report = _fit_grounding(seg_train, seg_val, bodies, labels_dir)
    steps.update()
    seg_model, seg_layers, report = _fit_segmenter(seg_train, cut_thresholds, progress)
    report["grounding"] = ground_report
    if seg_val:
        report["segmenter"]["validation"] = segmenter_validation(
            seg_val, lambda texts, side: segment_with(seg_model, seg_layers, texts, side=side)
        )
    steps.update()

    score_model, encoder = _fit_scorer(pair_train, progress, fit_params)
    report["scorer"] = {
        "train_pairs": len(pair_train),
        "zero_below": float(score_model["zero_below"]),
    }
    steps.update()
    if pair_val:
        val = [(r["a"], r["b"]) for r in pair_val]
        pred = predict_score(score_model, pair_features(val, encoder))
        report["scorer"]["validation"] = vars(
            score_agreement([pair_label(r) for r in pair_val], pred)
        )
    _save(seg_model, out_dir / SEGMENTER_FILE.name)
    _save(score_model, out_dir / SCORER_FILE.name)
    _save(ground_model, out_dir / GROUNDING_FILE.name)
    _write_reference(
        seg_val or seg_train,
        pair_val or pair_train,
        (seg_model, score_model, ground_model),
        seg_layers,
        encoder,
        bodies,
        out_dir,
    )
    load_model.cache_clear()
    tuned_encoder.cache_clear()
    segmenter_layers.cache_clear()
    steps.update()
    steps.close()
    return report
