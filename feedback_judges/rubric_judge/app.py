"""The rubric judge's Space: judge one feedback text against a bundled rubric with the
visitor's own OpenAI-compatible LLM endpoint, and show the score and every item's verdict
and reason.

No offline judge exists, so nothing is scored without an endpoint; the visitor's key is sent
to the endpoint they name only, never taken from the server's environment, shown, logged or
stored. Run locally with ``python app.py [--port N]`` (binds 127.0.0.1 unless told otherwise).
"""

from __future__ import annotations

import argparse
import html
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

# A demo needs no usage reporting; it also keeps the app from contacting anything at start.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr

import feedback_judges

logger = logging.getLogger("rubric_judge.app")

OPENAI_URL = "https://api.openai.com/v1"
MAX_CHARS = 8000
# Bounds on a run: each request, then the whole judging (the page never hangs).
REQUEST_TIMEOUT = float(os.environ.get("RUBRIC_DEMO_REQUEST_TIMEOUT", "30"))
DEADLINE = float(os.environ.get("RUBRIC_DEMO_DEADLINE", "120"))
RUBRICS = {name: feedback_judges.load_rubric(name) for name in feedback_judges.bundled_rubrics()}
#: Every material field of the bundled rubrics, in first-seen order (one textbox each).
FIELDS = list(dict.fromkeys(f.name for r in RUBRICS.values() for f in r.context))
EXAMPLE = {
    "rubric": "math-feedback",
    "question": "Write 36/168 in its simplest form.",
    "correct_answer": "3/14",
    "student_answer": "18/84",
    "feedback": "You stopped halving too early: can 18 and 84 both be divided again?",
}
_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rubric-demo")

CSS = """
.rj-error { border: 1px solid #c0392b; background: #fdecea; color: #7b241c;
  padding: .6em .9em; border-radius: 6px; }
.rj-score { font-size: 1.6em; font-weight: 600; }
.rj-items { border-collapse: collapse; }
.rj-items th, .rj-items td { border: 1px solid #ccc; padding: .3em .5em; vertical-align: top; }
.rj-yes { color: #1e8449; font-weight: 700; }
.rj-no { color: #c0392b; font-weight: 700; }
"""


class InputProblem(ValueError):
    """Input the demo cannot judge, with a message for the user."""


def request_options(base_url: str, model: str, api_key: str) -> dict:
    """The judge options for the visitor's endpoint (never the server's environment)."""
    if not (model or "").strip():
        raise InputProblem("Give the model name to use at the LLM endpoint.")
    base_url, api_key = (base_url or "").strip(), (api_key or "").strip()
    if not api_key and not base_url:
        raise InputProblem("Give your API key for the default OpenAI endpoint.")
    return {
        "model": model.strip(),
        "base_url": base_url or OPENAI_URL,
        "api_key": api_key or "no-key-needed",  # local servers take any key
        "request_timeout": REQUEST_TIMEOUT,
        "max_retries": 1,
        "backoff": 0.5,
        "use_cache": False,  # a cached verdict must not stand in for a wrong key
        "progress": False,
        "return_details": True,
    }


def material(rubric: str, values: dict[str, str]) -> dict[str, str]:
    """The rubric's material fields from the form, checked."""
    if rubric not in RUBRICS:
        raise InputProblem(f"Unknown rubric {rubric!r}.")
    context = {}
    for field in RUBRICS[rubric].context:
        text = (values.get(field.name) or "").strip()
        if field.required and not text:
            raise InputProblem(f"Fill in “{field.title}”: the {rubric} rubric needs it.")
        if len(text) > MAX_CHARS:
            raise InputProblem(f"{field.title}: too long for the demo (over {MAX_CHARS} chars).")
        if text:
            context[field.name] = text
    return context


def _error(text: str) -> tuple[str, str]:
    box = f'<div class="rj-error" id="rj-error" role="alert">{html.escape(text)}</div>'
    return box, ""


def _redact(text: str, key: str | None) -> str:
    """``text`` with the API key, if any, removed (a second line of defence)."""
    return text.replace(key.strip(), "[REDACTED]") if key and key.strip() else text


def items_html(rubric: str, detail: dict) -> str:
    """One row per rubric item: question, dimension, weight, verdict and the judge's reason."""
    rows = []
    for item in RUBRICS[rubric].items:
        ok = detail["satisfied"][item.id]
        verdict = "satisfied" if ok else "not satisfied"
        rows.append(
            f'<tr class="rj-item" data-id="{html.escape(item.id)}" '
            f'data-satisfied="{str(ok).lower()}">'
            f"<td>{html.escape(item.question)}</td><td>{html.escape(item.dimension)}"
            f"{' (gate)' if item.gate else ''}</td><td>{item.weight:g}</td>"
            f'<td class="{"rj-yes" if ok else "rj-no"}">{verdict}</td>'
            f"<td>{html.escape(detail['reasons'].get(item.id, ''))}</td></tr>"
        )
    head = "<tr><th>Item</th><th>Dimension</th><th>Weight</th><th>Verdict</th><th>Reason</th></tr>"
    return f'<table class="rj-items" id="rj-items">{head}{"".join(rows)}</table>'


def judge(rubric: str, feedback: str, base_url: str, model: str, api_key: str, *fields: str):
    """Judge the form's feedback; returns (status and score HTML, items HTML). Every
    failure becomes a message in the page."""
    try:
        if not (feedback or "").strip():
            raise InputProblem("Paste the feedback to judge.")
        if len(feedback) > MAX_CHARS:
            raise InputProblem(f"The feedback is too long for the demo (over {MAX_CHARS} chars).")
        context = material(rubric, dict(zip(FIELDS, fields, strict=True)))
        options = request_options(base_url, model, api_key)
        job = _WORKERS.submit(
            feedback_judges.judge_feedback, [feedback.strip()], [context], rubric, **options
        )
        result = job.result(timeout=DEADLINE)
    except InputProblem as err:
        return _error(str(err))
    except FutureTimeout:
        return _error(f"No result within {DEADLINE:g} s: the endpoint is too slow or busy.")
    except feedback_judges.JudgeError as err:
        return _error(_redact(f"The LLM endpoint failed: {err}", api_key))
    except (ValueError, TypeError) as err:
        return _error(_redact(f"Invalid input: {err}", api_key))
    except Exception as err:  # never a stack trace in the page; the key is never logged
        logger.error("unexpected %s: %s", type(err).__name__, _redact(str(err), api_key))
        return _error(_redact(f"Unexpected error ({type(err).__name__}): {err}", api_key))
    score = result["scores"][0]
    summary = (
        f'<p id="rj-status">Judged by {html.escape(result["config"]["model"])} with the '
        f"{html.escape(rubric)} rubric.</p>"
        f'<div class="rj-score" id="rj-score" data-value="{score!r}">Score {score:.3f}</div>'
        f'<p><code id="rj-signature">{html.escape(result["config"]["signature"])}</code></p>'
    )
    return _redact(summary, api_key), _redact(items_html(rubric, result["details"][0]), api_key)


def build_demo() -> gr.Blocks:
    """The Gradio interface."""
    with gr.Blocks(title="Rubric judge") as demo:
        gr.Markdown("# Rubric judge: does the feedback pass the checklist?")
        gr.Markdown(
            "An LLM answers each yes/no item of a rubric about one feedback text; the score "
            "is the weighted fraction satisfied (0 if a gate item fails). Give your own "
            "OpenAI-compatible endpoint: your key goes to that endpoint only and is never "
            "shown, logged or stored here."
        )
        with gr.Row():
            with gr.Column(scale=3):
                rubric = gr.Dropdown(
                    list(RUBRICS), value=EXAMPLE["rubric"], label="Rubric", elem_id="rj-rubric"
                )
                boxes = []
                for name in FIELDS:
                    field = next(f for r in RUBRICS.values() for f in r.context if f.name == name)
                    boxes.append(
                        gr.Textbox(
                            label=field.title,
                            value=EXAMPLE.get(name, ""),
                            lines=4 if name == "essay" else 1,
                            visible=any(f.name == name for f in RUBRICS[EXAMPLE["rubric"]].context),
                            elem_id=f"rj-field-{name}",
                        )
                    )
                feedback = gr.Textbox(
                    label="Feedback to judge",
                    value=EXAMPLE["feedback"],
                    lines=4,
                    elem_id="rj-feedback",
                )
            with gr.Column(scale=2):
                base_url = gr.Textbox(
                    label="Base URL", placeholder=f"{OPENAI_URL} (default)", elem_id="rj-base-url"
                )
                model = gr.Textbox(label="Model", placeholder="e.g. gpt-5-mini", elem_id="rj-model")
                api_key = gr.Textbox(
                    label="API key (never stored)", type="password", elem_id="rj-api-key"
                )
                run = gr.Button("Judge", variant="primary", elem_id="rj-run")
        status = gr.HTML(elem_id="rj-result")
        items = gr.HTML(elem_id="rj-items-box")

        def show_fields(name: str) -> list:
            wanted = {f.name for f in RUBRICS[name].context}
            return [gr.update(visible=n in wanted) for n in FIELDS]

        rubric.change(show_fields, rubric, boxes)
        run.click(
            judge,
            [rubric, feedback, base_url, model, api_key, *boxes],
            [status, items],
            api_name="judge",
            concurrency_limit=4,
        )
    return demo


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    """Serve the demo on ``--host``/``--port`` (default 127.0.0.1 and $GRADIO_SERVER_PORT or
    7860)."""
    parser = argparse.ArgumentParser(description="Serve the rubric judge demo.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    )
    args = parser.parse_args(argv)
    # Gradio would otherwise keep each run's inputs, the API key among them, in the browser.
    demo.queue().launch(server_name=args.host, server_port=args.port, css=CSS, run_history=False)


if __name__ == "__main__":
    main()
