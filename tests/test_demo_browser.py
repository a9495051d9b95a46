"""The Space demo end to end in a real browser: the app runs as `python app.py` from a copy
of the module folder, in a fresh venv that installed only its requirements.txt with the
built wheel (the Space as the Hub would build it), on a free port of 127.0.0.1. Headless
Chromium (Debian's `chromium`, driven by Playwright) loads an example, scores it, and the
rendered units, matrix, alignment and F1 are checked against each other and against the
matching recomputed here; errors and the LLM path (a real chat-completions server on
127.0.0.1) are checked in the page. Slow: it needs that venv. Screenshot:
test-artifacts/demo.png."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests.distribution import App
from tests.fake_openai_server import FakeOpenAIServer
from unimatch_metric import match

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "unimatch_metric" / "unimatch" / "app.py"
SCREENSHOT = REPO / "test-artifacts" / "demo.png"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXAMPLES = json.loads((APP.parent / "examples.json").read_text(encoding="utf-8"))["examples"]
LLM_CHOICE = "LLM endpoint (OpenAI-compatible)"
RUN_TIMEOUT_MS = 60_000

if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed (the 'demo' extra)"
)
pytest.importorskip("gradio", reason="gradio is not installed (the 'demo' extra)")
from tests.test_demo_app import SECRET, needs_key  # noqa: E402  (needs gradio)

pytestmark = pytest.mark.slow

STORAGE_DUMP = """async () => {
  const parts = [JSON.stringify({...localStorage}), JSON.stringify({...sessionStorage})];
  for (const info of await indexedDB.databases()) {
    const db = await new Promise((ok, ko) => {
      const r = indexedDB.open(info.name); r.onsuccess = () => ok(r.result); r.onerror = ko;
    });
    for (const store of db.objectStoreNames) {
      const rows = await new Promise((ok, ko) => {
        const r = db.transaction(store).objectStore(store).getAll();
        r.onsuccess = () => ok(r.result); r.onerror = ko;
      });
      parts.push(info.name + "/" + store + ": " + JSON.stringify(rows));
    }
    db.close();
  }
  return parts.join("\\n");
}"""


@pytest.fixture(scope="module")
def app_url(metric_space, tmp_path_factory):
    """The demo as a Space runs it: the module folder copied alone, its requirements.txt
    installed in a fresh venv with the built wheel (see conftest), ``python app.py`` in
    that folder; stopped afterwards."""
    venv, folder = metric_space
    app = App(venv, folder, tmp_path_factory.mktemp("demo"))
    try:
        yield app.url
    finally:
        log = app.stop()
    assert "Traceback" not in log


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, app_url):
    """A fresh page on the demo; any request leaving 127.0.0.1 is blocked and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.outside = []

    def only_local(route):
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            page.outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    page.goto(app_url)
    page.locator("#um-run").wait_for(timeout=30_000)
    yield page
    context.close()


def units_of(page, side: str) -> list[str]:
    items = page.locator(f".um-units-{side} li.um-unit").all_inner_texts()
    return [re.sub(r"^[GP]\d+\s+", "", item).strip() for item in items]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_example_scored_offline_renders_units_matrix_alignment_and_f1(page):
    example = EXAMPLES[0]
    page.get_by_text(example["name"]).click()
    comments = page.locator("#um-comments textarea")
    feedback = page.locator("#um-feedback textarea")
    page.wait_for_function(
        "([el, v]) => el.value === v",
        arg=[comments.element_handle(), "\n".join(example["comments"])],
    )
    assert feedback.input_value() == example["feedback"]
    page.locator("#um-threshold input[type=checkbox]").check()
    page.locator("#um-run").click()
    page.locator("#um-f1").wait_for(timeout=RUN_TIMEOUT_MS)

    # Units: in-order pieces of what was typed, covering all of it.
    instructor, model = units_of(page, "instructor"), units_of(page, "model")
    assert instructor and model
    assert squeeze("".join(instructor)) == squeeze("".join(example["comments"]))
    assert squeeze("".join(model)) == squeeze(example["feedback"])

    # The matrix: |G|x|P| cells; the figures and the alignment follow from it.
    cells = page.locator("#um-matrix td.um-cell")
    scores = [float(cells.nth(k).get_attribute("data-score")) for k in range(cells.count())]
    matrix = np.array(scores).reshape(len(instructor), len(model))
    assert ((matrix >= 0) & (matrix <= 4)).all()
    expected = match(matrix, threshold=3.0)
    f1 = page.locator("#um-f1")
    assert float(f1.get_attribute("data-value")) == pytest.approx(expected.f1)
    assert f1.locator(".um-value").inner_text() == f"{expected.f1:.3f}"
    assert page.locator("#um-matrix td.um-matched").count() == len(expected.pairs)
    kinds = page.locator("#um-alignment tr.um-row").evaluate_all(
        "rows => rows.map(r => r.dataset.kind)"
    )
    assert kinds.count("matched") == len(expected.pairs)
    assert kinds.count("missed") == len(instructor) - len(expected.pairs)
    assert kinds.count("over-generated") == len(model) - len(expected.pairs)
    reading = page.locator("#um-reading").inner_text()
    assert f"recovered {len(expected.pairs)} of {len(instructor)} instructor point" in reading
    assert "(score ≥ 3)" in reading
    assert "Segmented by" in page.locator("#um-status").inner_text()
    assert page.outside == []  # the page works with everything outside 127.0.0.1 blocked

    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 10_000


def test_empty_feedback_is_a_message_in_the_page(page):
    page.locator("#um-comments textarea").fill("Nice hook.")
    page.locator("#um-run").click()
    error = page.locator("#um-error")
    error.wait_for(timeout=RUN_TIMEOUT_MS)
    assert "Paste the model's feedback" in error.inner_text()
    assert page.locator("#um-f1").count() == 0


def test_llm_endpoint_wrong_then_right_key(page):
    with FakeOpenAIServer(responder=needs_key) as server:
        page.get_by_label(LLM_CHOICE).check()
        key = page.locator("#um-api-key input")
        key.wait_for()
        assert key.get_attribute("type") == "password"
        page.get_by_label("Base URL").fill(server.base_url)
        page.get_by_label("Model", exact=True).fill("fake-judge")
        wrong = "sk-wrong-browser-key-31337"
        key.fill(wrong)
        page.locator("#um-comments textarea").fill("Cut 'In conclusion'.\n'a lot' is two words.")
        page.locator("#um-feedback textarea").fill("Drop 'In conclusion'. Add a detail.")
        page.locator("#um-run").click()
        error = page.locator("#um-error")
        error.wait_for(timeout=RUN_TIMEOUT_MS)
        assert "HTTP 401" in error.inner_text()
        assert "Traceback" not in page.content()

        key.fill(SECRET)
        page.locator("#um-run").click()
        page.locator("#um-f1").wait_for(timeout=RUN_TIMEOUT_MS)
        assert "scored by llm (fake-judge)" in page.locator("#um-status").inner_text()
        assert units_of(page, "model") == ["Drop 'In conclusion'.", "Add a detail."]
        assert server.request_count >= 5  # one refused, then 3 segmentations and 1 scoring
        stored = page.evaluate(STORAGE_DUMP)
        for text in (page.content(), stored):
            assert wrong not in text and SECRET not in text
