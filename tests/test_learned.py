"""The learned offline backends: shipped trees load and reproduce, retraining works."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sefora_cli.main import main
from unimatch_metric.grounding import Grounding
from unimatch_metric.models import MODEL_DIR, REFERENCE_FILE
from unimatch_metric.scorers.learned import LearnedScorer
from unimatch_metric.segmenters import SIDES
from unimatch_metric.segmenters.learned import (
    SEG_DIM,
    LearnedSegmenter,
    candidate_cuts,
    cut_head,
    cut_states,
    cut_windows,
    frozen_states,
    segmenter_features,
    window_features,
    windows,
)
from unimatch_metric.training.finetune import (
    CUT_FIT_PARAMS,
    FIT_PARAMS,
    fine_tune,
    fine_tune_cuts,
    length_batches,
    paragraph_batches,
)
from unimatch_metric.training.train import (
    SCORER_FOLDS,
    TEXT_BELOW,
    ZERO_BELOW,
    gold_cut_labels,
    train_offline,
)
from unimatch_metric.training.trees import fit_trees
from unimatch_metric.trees import predict_proba, predict_raw

LABELS = Path(__file__).resolve().parents[1] / "labels"


def test_tree_arrays_match_scikit_learn() -> None:
    ensemble = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 5))
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(float)
    arrays = fit_trees(x, y, classify=True, n_estimators=30)
    model = ensemble.GradientBoostingClassifier(
        random_state=0, n_estimators=30, max_depth=3, learning_rate=0.05, subsample=0.8
    ).fit(x, y)
    probe = rng.normal(size=(50, 5))
    np.testing.assert_allclose(predict_raw(arrays, probe), model.decision_function(probe))
    np.testing.assert_allclose(predict_proba(arrays, probe), model.predict_proba(probe)[:, 1])
    with pytest.raises(ValueError, match="expected 5 features"):
        predict_raw(arrays, probe[:, :4])


def test_shipped_models_reproduce_reference_outputs() -> None:
    reference = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    assert LearnedSegmenter().segment(reference["texts"]) == reference["units"]
    pairs = [tuple(p) for p in reference["pairs"]]
    scores = LearnedScorer().score(pairs)
    np.testing.assert_allclose(scores, reference["scores"], atol=1e-3)
    assert LearnedScorer().score(pairs) == scores  # deterministic
    assert all(0 <= s <= 4 for s in scores)


def test_artefacts_are_small() -> None:
    size = sum(p.stat().st_size for p in MODEL_DIR.iterdir())
    assert size <= 25 * 2**20


def test_segmenter_units_cover_the_text() -> None:
    text = "Nice image, but the sentence runs on. Who is she?  Why now?\n- Cut 'very'."
    [units] = LearnedSegmenter().segment([text])
    assert "".join(units).replace(" ", "") == "".join(text.split()).replace(" ", "")
    assert all(u == u.strip() and u for u in units)


def test_encoder_windows_give_every_word_piece_room_on_both_sides() -> None:
    for n in (1, 254, 255, 400, 1000, 1017):
        starts = windows(n)
        assert starts[0] == 0 and all(s >= 0 and s + 254 >= min(n, 254) for s in starts)
        for j in range(n):
            w = max(starts, key=lambda s: min(j - s, s + 254 - j))
            assert w <= j < w + 254
            assert min(j - w, w + 254 - j) >= min(63, j, n - j)  # a quarter window, or the edge


def test_cut_states_do_not_depend_on_batching_and_cover_long_texts() -> None:
    short = "Strong hook. Who is she? Add a source."
    point = "The second claim needs a source, and the quote should be introduced. "
    long = point * 40  # several encoder windows
    layers = LearnedSegmenter().layers
    alone = cut_states(layers, [short])[0]
    together = cut_states(layers, [long, short, "No cut here"])
    assert alone.shape == (len(candidate_cuts(short)), (2 * 3 + 3) * 384)
    # The piece after a cut is the piece before the next one: its mean state is shared, and
    # the last block is the product of the two pieces' means.
    left, right = slice(6 * 384, 7 * 384), slice(7 * 384, 8 * 384)
    np.testing.assert_allclose(alone[0, right], alone[1, left], atol=1e-6)
    assert not np.allclose(alone[0, left], alone[0, right], atol=1e-2)
    np.testing.assert_allclose(alone[:, 8 * 384 :], alone[:, left] * alone[:, right], atol=1e-6)
    np.testing.assert_allclose(together[1], alone, atol=1e-4)
    assert together[2].shape[0] == 0
    states = together[0]
    assert states.shape[0] == len(candidate_cuts(long)) >= 40
    assert np.all(np.abs(states).sum(axis=1) > 0)  # every cut has its states, far ones too
    # The same sentence start deep in the text looks more like it does in the first window
    # than any cut of the other kind (", and") does.
    starts = [c[0] for c in candidate_cuts(long)]
    same = [starts.index(k * len(point)) for k in (1, 20, 38, 39)]
    unit = states / np.linalg.norm(states, axis=1, keepdims=True)
    similarity = unit @ unit[same[0]]
    other = [i for i, start in enumerate(starts) if start % len(point)]
    assert similarity[same[1:]].min() > similarity[other].max()
    [units] = LearnedSegmenter().segment([long])
    assert "".join(units).replace(" ", "") == long.replace(" ", "")


def test_candidate_cuts_where_the_text_leaves_no_space() -> None:
    text = "Lovely memories--I wonder why. Nice...Cite it.Who is she?Why? A well-known U.S. fact."
    found = [(text[offset:].split()[0], kind) for offset, kind, _ in candidate_cuts(text)]
    assert found == [
        ("I", "dash"),
        ("Nice...Cite", "period"),
        ("Cite", "period"),
        ("Who", "period"),
        ("Why?", "question"),
        ("A", "question"),
    ]  # no cut inside "well-known" or "U.S."


def test_candidate_cuts_with_no_punctuation() -> None:
    text = "Love the title and the inspiration (though it's long), but not the brand-and-band bit"
    found = [(text[offset:].split()[0], kind, word) for offset, kind, word in candidate_cuts(text)]
    assert found == [
        ("and", "unpunctuated", "and"),
        ("(though", "unpunctuated", ""),
        ("but", "comma", "but"),
    ]  # no cut inside "brand-and-band"; a comma before "but" keeps its own kind
    text = "(Aside) Romeo And Juliet (?) reads well and/or fast (really) but not here and"
    found = [(text[offset:].split()[0], kind, word) for offset, kind, word in candidate_cuts(text)]
    # Not at the start, before a capital "And", a bracket without a word, "and/or", or a
    # last piece that is only "and"; before "(really)" and after it, yes.
    assert found == [("(really)", "unpunctuated", ""), ("but", "unpunctuated", "but")]


def test_segmenter_features_say_which_side_the_text_comes_from() -> None:
    text = "Nice hook. Cite your sources, and check the dates."
    feedback, instructor = segmenter_features(text), segmenter_features(text, "instructor")
    assert feedback.shape == instructor.shape == (len(candidate_cuts(text)), SEG_DIM)
    np.testing.assert_array_equal(feedback[:, :-1], instructor[:, :-1])
    assert set(feedback[:, -1]) == {0.0} and set(instructor[:, -1]) == {1.0}


def test_gold_labels_mark_unit_starts() -> None:
    text = "Good hook. Expand the second point, but cut the list."
    labels = gold_cut_labels(text, ["Good hook.", "Expand the second point,", "but cut the list."])
    starts = [c[0] for c, y in zip(candidate_cuts(text), labels, strict=True) if y]
    assert starts == [text.index("Expand"), text.index("but")]
    with pytest.raises(ValueError, match="not in the text"):
        gold_cut_labels(text, ["Bad hook."])


@pytest.mark.slow
def test_retraining_on_a_subset(tmp_path: Path) -> None:
    labels, out = tmp_path / "labels", tmp_path / "models"
    labels.mkdir()
    _copy_paragraphs(labels)
    rows = [json.loads(line) for line in (LABELS / "segments.jsonl").open(encoding="utf-8")]
    feedback = [r for r in rows if r["source"] == "model"]  # the grounding model learns on these
    kept = rows[:90] + feedback[:60]
    (labels / "segments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept), "utf-8")
    pairs = (LABELS / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[:150]
    (labels / "pairs.jsonl").write_text("\n".join(pairs) + "\n", "utf-8")
    report = train_offline(labels, out, progress=False)
    assert {p.name for p in out.iterdir()} == {
        "segmenter.npz",
        "scorer.npz",
        "grounding.npz",
        "reference.json",
    }
    assert report["segmenter"]["train_texts"] > 0 and report["scorer"]["train_pairs"] > 0
    assert report["scorer"]["zero_below"] in ZERO_BELOW
    thresholds = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)
    for key, side in (("cut_at", "feedback"), ("cut_at_instructor", "instructor")):
        assert report["segmenter"][key] in thresholds
        assert 0 <= report["segmenter"][f"cv_{side}"]["window_diff"] <= 1
        assert set(report["segmenter"][f"cv_{side}"]["by_threshold"]) == {
            str(t) for t in thresholds
        }
    # Instructor comments' threshold: the lowest of those with the best cross-validated F1.
    curve = report["segmenter"]["cv_instructor"]["by_threshold"]
    best = max(v["f1"] for v in curve.values())
    assert report["segmenter"]["cut_at_instructor"] == min(
        t for t in thresholds if curve[str(t)]["f1"] == best
    )
    seg = LearnedSegmenter(path=out / "segmenter.npz")
    scorer = LearnedScorer(path=out / "scorer.npz")
    assert seg.segment(["Great start! Now add a source."])[0]
    assert seg.cache_namespace != LearnedSegmenter().cache_namespace  # never its old results
    assert scorer.cache_namespace != LearnedScorer().cache_namespace
    # The reference outputs written with the models are what the saved files reproduce.
    reference = json.loads((out / "reference.json").read_text(encoding="utf-8"))
    assert seg.segment(reference["texts"]) == reference["units"]
    scores = scorer.score([tuple(p) for p in reference["pairs"]])
    np.testing.assert_allclose(scores, reference["scores"], atol=1e-3)
    assert all(0 <= s <= 4 for s in scores)
    assert scorer.score([("Cite your sources.", "cite  your SOURCES.")]) == [4.0]
    grounding = Grounding(out / "grounding.npz")
    assert report["grounding"]["train_units"] > 0 and len(grounding.vocabulary) > 0
    assert grounding.text_below == report["grounding"]["text_below"] in TEXT_BELOW
    probe = reference["grounding"]
    got = grounding.probabilities([r["units"] for r in probe], [r["paragraph"] for r in probe])
    for p, row in zip(got, probe, strict=True):
        np.testing.assert_allclose(p, row["probabilities"], atol=1e-4)
    # Retraining on the same labels, the recipe given explicitly, writes the same bytes.
    again = tmp_path / "again"
    train_offline(labels, again, progress=False, fit_params=dict(FIT_PARAMS))
    for path in out.iterdir():
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name


def test_a_recipe_without_a_schedule_is_named_before_training() -> None:
    recipe = {k: v for k, v in FIT_PARAMS.items() if k != "warmup"}
    with pytest.raises(ValueError, match="lacks warmup"):
        fine_tune(LearnedScorer().encoder, [], [], [], [], progress=False, params=recipe)


def test_fine_tuning_batches_keep_a_paragraphs_pairs_together_in_a_seeded_order() -> None:
    torch = pytest.importorskip("torch")

    def batches(groups: np.ndarray, seed: int) -> list[list[int]]:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return [b.tolist() for b in paragraph_batches(groups, 32)]

    groups = np.asarray([f"p{k % 3}" for k in range(210)])  # 3 paragraphs of 70, interleaved
    got = batches(groups, 3)
    assert sorted(sum(got, [])) == list(range(210))
    assert [len(b) for b in got].count(32) == len(got) - 1
    # A paragraph longer than a batch fills whole batches: none spans more than two.
    assert max(len(set(groups[b])) for b in got) <= 2
    assert got == batches(groups, 3)
    assert got != batches(groups, 4)
    # Within a paragraph the pairs are shuffled, not kept in their given order.
    runs = [[i for i in b if groups[i] == g] for b in got for g in ("p0", "p1", "p2")]
    assert any(run != sorted(run) for run in runs)
    (one,) = batches(np.asarray(["p0"] * 5), 0)
    assert sorted(one) == list(range(5))
    assert batches(np.asarray([]), 0) == []


def test_length_batches_cover_every_item_once_in_runs_of_similar_length() -> None:
    torch = pytest.importorskip("torch")

    def batches(lengths: list[int], seed: int) -> list[list[int]]:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return [b.tolist() for b in length_batches(lengths, 4)]

    lengths = [(k * 37) % 101 for k in range(300)]
    got = batches(lengths, 0)
    assert sorted(sum(got, [])) == list(range(300))
    assert max(len(b) for b in got) == 4
    # Within a batch the lengths are close: far closer than across the whole list.
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in got])
    assert spread < 10 < max(lengths) - min(lengths)
    assert got == batches(lengths, 0) != batches(lengths, 1)


def test_fine_tuned_cuts_learn_the_labelled_boundaries() -> None:
    torch = pytest.importorskip("torch")
    texts = [
        "Great hook. Cite your sources.",
        "Nice imagery. Watch the comma splices.",
        "Who is she? Is she his sister?",
        "Add a source. It would make the claim stronger.",
    ] * 4
    labels = [np.asarray([1.0]), np.asarray([1.0]), np.asarray([0.0]), np.asarray([0.0])] * 4
    windows = cut_windows(texts)
    assert [len(w.cuts) for w in windows] == [1] * len(texts)
    recipe = {**CUT_FIT_PARAMS, "epochs": 6, "batch_size": 4, "learning_rate": 3e-4}
    before = torch.get_rng_state()
    layers, head = fine_tune_cuts(
        windows, frozen_states(windows), labels, [1.0] * len(texts), False, recipe
    )
    assert torch.equal(torch.get_rng_state(), before)  # its own seeded RNG, the caller's untouched
    p = [float(cut_head(head, x)[0]) for x in cut_states(layers, texts[:4])]
    assert min(p[:2]) > 0.5 > max(p[2:])  # the head starts at zero: 0.5 everywhere
    incomplete = {k: v for k, v in CUT_FIT_PARAMS.items() if k != "head_learning_rate"}
    with pytest.raises(ValueError, match="lacks head_learning_rate"):
        fine_tune_cuts(windows, [], labels, [1.0], False, incomplete)
    with pytest.raises(ValueError, match="one of each per text"):
        fine_tune_cuts(windows, frozen_states(windows), labels, [1.0], False, recipe)


def test_training_features_are_the_inference_cut_states() -> None:
    pytest.importorskip("torch")
    point = "The second claim needs a source, and the quote should be introduced. "
    texts = ["Strong hook. Who is she? Add a source.", "No cut here", point * 40, ""]
    layers = LearnedSegmenter().layers
    windows = cut_windows(texts)
    assert len({w.text_index for w in windows if w.text_index == 2}) == 1
    assert sum(w.text_index == 2 for w in windows) > 1  # the long text spans several windows
    rows = window_features(layers, windows, frozen_states(windows)).detach().numpy()
    where = [(w.text_index, row) for w in windows for row, *_ in w.cuts]
    assert sorted(where) == [
        (t, r) for t, x in enumerate(texts) for r in range(len(candidate_cuts(x)))
    ]
    states = cut_states(layers, texts)
    assert [len(s) for s in states] == [len(candidate_cuts(t)) for t in texts]
    for (t, row), x in zip(where, rows, strict=True):
        np.testing.assert_allclose(x, states[t][row], atol=1e-4)


def test_fine_tuning_names_pairs_without_a_group() -> None:
    with pytest.raises(ValueError, match="groups has 1 entries for 2 pairs"):
        fine_tune(LearnedScorer().encoder, [], [(0, 1), (1, 0)], [1.0, 2.0], ["p1"], False)


def test_scores_under_the_models_zero_below_are_zero(tmp_path: Path) -> None:
    from unimatch_metric.models import SCORER_FILE, load_model

    pairs = [
        ("Nice hook.", "Great opening line."),
        ("Cite your sources.", "The dog scene is vivid."),
        ("Who is she?", "Clarify who the woman in the second sentence is."),
        ("Watch the comma splices.", "Several sentences run together with commas."),
    ]
    scores = {}
    for cut in (0.0, 2.0):
        model = {**load_model(SCORER_FILE), "zero_below": np.asarray(cut)}
        np.savez(tmp_path / f"scorer{cut}.npz", **model)
        scores[cut] = LearnedScorer(path=tmp_path / f"scorer{cut}.npz").score(pairs)
    assert any(s < 2.0 for s in scores[0.0]) and any(s >= 2.0 for s in scores[0.0])
    assert scores[2.0] == [0.0 if s < 2.0 else s for s in scores[0.0]]


def test_pair_features_count_a_short_comment_found_inside_a_longer_unit() -> None:
    from unimatch_metric.models import SCORER_FILE
    from unimatch_metric.scorers.learned import pair_features, tuned_encoder

    short, long = "Echo your intro.", "Your conclusion should echo the intro: its image of home."
    x = pair_features([(short, long), (long, short)], tuned_encoder(SCORER_FILE))
    jaccard, smaller, instructor, quote = x[:, -4:].T
    # {echo, intro} of 2 and of 5 content words: all of the smaller unit, 2 of 5 overall
    assert jaccard.tolist() == [0.4, 0.4] and smaller.tolist() == [1.0, 1.0]
    assert instructor.tolist() == [1.0, 0.4] and quote.tolist() == [0.0, 0.0]


def test_learned_segmentations_are_cached(tmp_path: Path) -> None:
    from sefora_llm.cache import make_key
    from unimatch_metric import segment
    from unimatch_metric.options import Options

    texts = ["Strong hook. Who is she? Add a source.", "Cut the second sentence."]
    units = segment(texts, segmenter="learned", cache_dir=tmp_path)
    cache = Options(cache_dir=tmp_path).cache()
    keys = [make_key(LearnedSegmenter().cache_namespace, text) for text in texts]
    assert [cache.get_many(keys)[key] for key in keys] == units


def test_instructor_comments_are_cut_at_their_own_threshold(tmp_path: Path) -> None:
    from sefora_llm.cache import make_key
    from unimatch_metric import segment
    from unimatch_metric.models import SEGMENTER_FILE, load_model
    from unimatch_metric.options import Options

    # A copy of the shipped segmenter that cuts instructor comments at every candidate and
    # feedback texts nowhere.
    model = {**load_model(SEGMENTER_FILE), "cut_at": np.asarray(1.0)}
    model["cut_at_instructor"] = np.asarray(-1.0)
    path = tmp_path / "segmenter.npz"
    np.savez(path, **model)
    text = "Nice hook. Cite your sources. Who is she?"
    seg = LearnedSegmenter(path=path)
    assert seg.segment([text]) == [[text]]
    assert seg.segment([text], "instructor") == [
        ["Nice hook.", "Cite your sources.", "Who is she?"]
    ]
    # Through the cache, each side keeps its own results.
    shipped = LearnedSegmenter()
    both = [segment([text], segmenter="learned", side=s, cache_dir=tmp_path) for s in SIDES]
    cache = Options(cache_dir=tmp_path).cache()
    namespaces = [shipped.cache_namespace, (*shipped.cache_namespace, "instructor")]
    keys = [make_key(namespace, text) for namespace in namespaces]
    assert [cache.get_many(keys)[key] for key in keys] == [u for [u] in both]
    assert both == [shipped.segment([text], s) for s in SIDES]


def test_a_segmenter_file_without_its_tuned_layers_is_named(tmp_path: Path) -> None:
    from unimatch_metric.errors import ModelFileError
    from unimatch_metric.models import SEGMENTER_FILE, load_model

    shipped = load_model(SEGMENTER_FILE)
    old = {k: v for k, v in shipped.items() if not k.startswith(("cut_layers.", "cut_head."))}
    np.savez(tmp_path / "old.npz", **old)
    with pytest.raises(ModelFileError, match=r"old\.npz has no fine-tuned head of 3456"):
        LearnedSegmenter(path=tmp_path / "old.npz")
    layer = next(k for k in shipped if k.startswith("cut_layers."))
    np.savez(tmp_path / "part.npz", **{k: v for k, v in shipped.items() if k != layer})
    with pytest.raises(ModelFileError, match=r"part\.npz has no complete fine-tuned cut"):
        LearnedSegmenter(path=tmp_path / "part.npz")


def test_unimatch_segments_references_as_instructor_comments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from unimatch_metric import unimatch
    from unimatch_metric.segmenters import learned

    # Each side cuts at its own threshold. With the instructor side cutting at every
    # candidate and the feedback side at none, the reference must come out cut and the
    # prediction whole, whatever thresholds retraining picks (they may tie).
    monkeypatch.setattr(
        learned, "cut_threshold", lambda model, side: 0.0 if side == "instructor" else 1.0
    )
    text = "This quote is strong. Cite your sources."
    out = unimatch([text], [[text]], segmenter="learned", return_details=True, use_cache=False)
    [details] = out["details"]
    assert details["reference_units"] == ["This quote is strong.", "Cite your sources."]
    assert details["prediction_units"] == [text]


def test_a_side_that_does_not_exist_is_an_option_error() -> None:
    from unimatch_metric import segment
    from unimatch_metric.errors import UniMatchOptionError

    with pytest.raises(UniMatchOptionError, match="side must be one of feedback, instructor"):
        segment(["Nice hook."], "rules", side="teacher")  # type: ignore[arg-type]


def _copy_paragraphs(labels: Path) -> None:
    (labels / "material").mkdir()
    source = LABELS / "material" / "paragraphs.jsonl"
    (labels / "material" / "paragraphs.jsonl").write_bytes(source.read_bytes())


def test_retraining_needs_pairs_from_enough_paragraphs(tmp_path: Path) -> None:
    from unimatch_metric import UniMatchError

    labels, out = tmp_path / "labels", tmp_path / "models"
    labels.mkdir()
    segments = (LABELS / "segments.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    pairs = [json.loads(line) for line in (LABELS / "pairs.jsonl").open(encoding="utf-8")]
    items = sorted({r["item_id"] for r in pairs if r["part"] == "train"})
    (labels / "segments.jsonl").write_text("\n".join(segments) + "\n", encoding="utf-8")
    few = [json.dumps(r) + "\n" for r in pairs if r["item_id"] in items[: SCORER_FOLDS - 1]]
    (labels / "pairs.jsonl").write_text("".join(few), "utf-8")
    # Checked before anything is read or fitted.
    with pytest.raises(UniMatchError, match=f"at least {SCORER_FOLDS} paragraphs"):
        train_offline(labels, out, progress=False)
    enough = [json.dumps(r) + "\n" for r in pairs if r["item_id"] in items[:SCORER_FOLDS]]
    (labels / "pairs.jsonl").write_text("".join(enough), "utf-8")
    # The paragraphs (for the grounding model) are read next: a missing file fails at once.
    with pytest.raises(UniMatchError, match="material/paragraphs.jsonl: cannot read"):
        train_offline(labels, out, progress=False)
    _copy_paragraphs(labels)
    # The grounding model needs feedback texts of two paragraphs; these are all comments.
    with pytest.raises(
        UniMatchError, match=r"grounding needs training feedback texts \(source .model.\) of two"
    ):
        train_offline(labels, out, progress=False)
    assert not out.exists()  # nothing written


def test_retraining_needs_segmentations_with_and_without_boundaries(tmp_path: Path) -> None:
    from unimatch_metric import UniMatchError

    labels, out = tmp_path / "labels", tmp_path / "models"
    labels.mkdir()
    rows = [json.loads(line) for line in (LABELS / "segments.jsonl").open(encoding="utf-8")]
    _copy_paragraphs(labels)
    train = [r for r in rows if r["part"] == "train"]
    texts = [r for r in train if r["source"] == "instructor"][:30]
    texts += [r for r in train if r["source"] == "model"][:30]
    whole = [{**r, "units": [r["text"].strip()]} for r in texts]
    (labels / "segments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in whole), "utf-8")
    (labels / "pairs.jsonl").write_bytes((LABELS / "pairs.jsonl").read_bytes())
    with pytest.raises(UniMatchError, match="segments.jsonl: .* start a unit"):
        train_offline(labels, out, progress=False)
    assert not out.exists()  # nothing written


def test_validate_cli(tmp_path: Path, capsys) -> None:
    rows = [
        {"text": "Great hook. Add a date.", "units": ["Great hook.", "Add a date."]},
        {"text": "Who is he? Why?", "units": ["Who is he? Why?"], "source": "instructor"},
        {"text": "Cut it. Add one.", "units": ["Cut it.", "Add one."], "source": "model"},
    ]
    path = tmp_path / "seg.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["validate-segmenter", str(path), "--segmenter", "rules"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["segmenter"] == "rules" and out["n_texts"] == 3 and 0 <= out["f1"] <= 1
    assert {s: v["n_texts"] for s, v in out["by_source"].items()} == {"instructor": 1, "model": 1}
    path.write_text('{"text": "x"}\n', encoding="utf-8")
    assert main(["validate-segmenter", str(path)]) == 2
    assert "row 1: missing units" in capsys.readouterr().err


@pytest.mark.slow
def test_card_reports_the_shipped_models_validation_figures() -> None:
    from unimatch_metric import MODULE_PATH, score_pairs, segment
    from unimatch_metric.training.train import pair_label, read_labels
    from unimatch_metric.training.validate import score_agreement, segmenter_validation

    card = (Path(MODULE_PATH) / "README.md").read_text(encoding="utf-8")
    seg = [r for r in read_labels(LABELS / "segments.jsonl") if r["part"] == "validation"]
    pairs = [r for r in read_labels(LABELS / "pairs.jsonl") if r["part"] == "validation"]
    s = segmenter_validation(
        seg, lambda texts, side: segment(texts, "learned", side=side, use_cache=False)
    )
    c = score_agreement(
        [pair_label(r) for r in pairs],
        score_pairs([(r["a"], r["b"]) for r in pairs], scorer="learned", use_cache=False),
    )
    assert f"| {s['window_diff']:.3f} / {s['f1']:.3f} |" in card
    for source, f in s["by_source"].items():
        line = f"{f['n_texts']} texts: WindowDiff {f['window_diff']:.3f}, F1 {f['f1']:.3f}"
        assert line in card, source
    assert f"| {c.pearson:.3f} / {c.spearman:.3f} |" in card


def test_card_offline_example_is_what_the_shipped_models_print() -> None:
    evaluate = pytest.importorskip("evaluate")
    from unimatch_metric import MODULE_PATH

    card = (Path(MODULE_PATH) / "README.md").read_text(encoding="utf-8")
    results = evaluate.load(MODULE_PATH).compute(
        predictions=["Great opening! Try varying your sentence length."],
        references=[["Nice hook.", "Your sentences are all the same length."]],
        return_details=True,
        use_cache=False,
    )
    printed = [
        repr((results["precision"], results["recall"], results["f1"])),
        repr(results["details"][0]["prediction_units"]),
        repr(results["details"][0]["scores"]),
    ]
    for line in printed:
        assert f"\n{line}\n" in card


def test_fine_tuned_layers_leave_the_embedding_baseline_untouched() -> None:
    from unimatch_metric.encoder import load_embedding_model

    texts = ["Nice hook.", "Cite a source for the second claim.", "Who is she?"]
    encoder = LearnedScorer().encoder
    tuned = encoder.encode(texts)
    top = load_embedding_model()[0].auto_model.encoder.layer[encoder.frozen :]
    original = encoder.top(top, encoder.bottom_states(texts)).detach().numpy()
    baseline = load_embedding_model().encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(original, baseline, atol=1e-5)  # the shared model unchanged
    assert not np.allclose(tuned, original, atol=1e-3)
