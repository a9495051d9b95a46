"""The UniMatch Space: score one paragraph's model feedback against the instructor's
comments and show the units, the 0–4 score matrix, the alignment and P/R/F1.

Offline by default (no API key); an OpenAI-compatible LLM endpoint when the user gives
one. Run locally with ``python app.py [--port N]`` (binds 127.0.0.1 unless told otherwise).
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

# A demo needs no usage reporting; it also keeps the app from contacting anything at start.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr

import unimatch_metric
from unimatch_metric.explain import explain

logger = logging.getLogger("unimatch.app")

OFFLINE = "Offline (no API key)"
LLM = "LLM endpoint (OpenAI-compatible)"
OPENAI_URL = "https://api.openai.com/v1"
MAX_COMMENTS = 20
MAX_CHARS = 4000
# Bounds on an LLM run: each request, then the whole computation (the page never hangs).
REQUEST_TIMEOUT = float(os.environ.get("UNIMATCH_DEMO_REQUEST_TIMEOUT", "20"))
DEADLINE = float(os.environ.get("UNIMATCH_DEMO_DEADLINE", "90"))
OUTPUTS = 5  # status, figures, alignment, matrix, units

EXAMPLES = json.loads(Path(__file__).with_name("examples.json").read_text(encoding="utf-8"))[
    "examples"
]
_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="unimatch-demo")

CSS = """
.um-status-error { border: 1px solid #c0392b; background: #fdecea; color: #7b241c;
  padding: .6em .9em; border-radius: 6px; }
.um-figures { display: flex; gap: 1.5em; }
.um-figure { display: flex; flex-direction: column; }
.um-label { font-size: .85em; opacity: .75; }
.um-value { font-size: 1.6em; font-weight: 600; }
.um-reading { font-size: 1.05em; margin-top: .4em; }
.um-variant { font-size: .85em; opacity: .7; }
.um-matrix, .um-alignment { border-collapse: collapse; }
.um-matrix th, .um-matrix td, .um-alignment th, .um-alignment td {
  border: 1px solid #ccc; padding: .3em .5em; vertical-align: top; }
.um-matrix td { text-align: center; min-width: 3.5em; }
.um-matrix td.um-matched { outline: 3px solid #e67e22; outline-offset: -3px; font-weight: 700; }
.um-head { font-weight: 400; font-size: .8em; max-width: 14em; }
.um-tag { font-weight: 700; margin-right: .3em; }
.um-pair-score { text-align: center; font-weight: 600; }
.um-scale { font-size: .75em; font-weight: 400; opacity: .8; }
.um-missed .um-mark { color: #c0392b; font-weight: 700; }
.um-over-generated .um-mark { color: #b9770e; font-weight: 700; }
.um-units { display: flex; gap: 2em; }
.um-units > div { flex: 1; }
"""

DESCRIPTION = """\
**UniMatch** compares model feedback on one paragraph of student writing with the
instructor's comments on it. Both sides are split into *feedback units*, every pair is
scored 0–4 (4 = the same feedback, 0 = unrelated), and a one-to-one matching with the
highest total score gives precision, recall and F1 (see the metric card). Give the
student paragraph too and feedback units about another text score 0.

The offline backends need no key, but agree with human judgement less than a good LLM
judge (see the metric card's limitations); their first run loads a small model. For
figures you would report, give an LLM endpoint: your key is sent to that endpoint only,
and is never shown, logged or stored here.
"""


class InputProblem(ValueError):
    """Input the demo cannot score, with a message for the user."""


def parse_inputs(comments: str, feedback: str) -> tuple[list[str], str]:
    """The instructor comments (one per non-empty line) and the feedback, checked."""
    if not feedback or not feedback.strip():
        raise InputProblem("Paste the model's feedback to score.")
    lines = [line.strip() for line in (comments or "").splitlines() if line.strip()]
    if not lines:
        raise InputProblem("Give at least one instructor comment (one per line).")
    if len(lines) > MAX_COMMENTS:
        raise InputProblem(f"At most {MAX_COMMENTS} instructor comments, got {len(lines)}.")
    for name, text in (("instructor comments", comments), ("model feedback", feedback)):
        if len(text) > MAX_CHARS:
            raise InputProblem(
                f"{name.capitalize()}: too long for the demo (over {MAX_CHARS} characters)."
            )
    return lines, feedback.strip()


def backend_options(
    scorer: str, base_url: str, model: str, api_key: str, use_threshold: bool, tau: float
) -> dict:
    """The UniMatch options the form describes (offline backends unless an LLM is chosen)."""
    options: dict = {"threshold": float(tau) if use_threshold else None, "return_details": True}
    if scorer != LLM:
        return {**options, "segmenter": "offline", "scorer": "offline"}
    if not (model or "").strip():
        raise InputProblem("Give the model name to use at the LLM endpoint.")
    base_url = (base_url or "").strip()
    api_key = (api_key or "").strip()
    if not api_key and not base_url:
        raise InputProblem("Give your API key for the default OpenAI endpoint.")
    return {
        **options,
        "segmenter": "llm",
        "scorer": "llm",
        "model": model.strip(),
        # Only what the visitor typed: never the server's environment, whose key must not
        # travel to an endpoint a visitor chose. Local servers take any key.
        "base_url": base_url or OPENAI_URL,
        "api_key": api_key or "no-key-needed",
        "request_timeout": REQUEST_TIMEOUT,
        "max_retries": 1,
        "backoff": 0.5,
        # Every run asks the endpoint: a cached answer must not stand in for a wrong key.
        "use_cache": False,
        "progress": False,
    }


def _redact(text: str, key: str | None) -> str:
    """``text`` with the API key, if any, removed (a second line of defence)."""
    if key and key.strip():
        text = text.replace(key.strip(), "[REDACTED]")
    return text


def _error(text: str) -> tuple[str, ...]:
    """The outputs for a failed run: the message, every result view cleared."""
    box = f'<div class="um-status-error" id="um-error" role="alert">{html.escape(text)}</div>'
    return (box,) + ("",) * (OUTPUTS - 1)


def score_paragraph(
    paragraph: str,
    comments: str,
    feedback: str,
    scorer: str,
    base_url: str,
    model: str,
    api_key: str,
    use_threshold: bool,
    tau: float,
) -> tuple[str, ...]:
    """Run UniMatch on the form's inputs; returns status, figures, alignment, matrix, units.

    A non-empty paragraph is given to UniMatch (grounding). Every failure becomes a message
    in the page.
    """
    paragraphs = [paragraph] if (paragraph or "").strip() else None
    backend = "the LLM endpoint" if scorer == LLM else "the offline backend"
    try:
        references, prediction = parse_inputs(comments, feedback)
        options = backend_options(scorer, base_url, model, api_key, use_threshold, tau)
        job = _WORKERS.submit(
            unimatch_metric.unimatch, [prediction], [references], paragraphs, **options
        )
        result = job.result(timeout=DEADLINE)
        view = explain(result)
    except InputProblem as err:
        return _error(str(err))
    except FutureTimeout:
        return _error(f"No result within {DEADLINE:g} s: {backend} is too slow or busy.")
    except (ValueError, TypeError) as err:  # options the library rejects (UniMatchOptionError)
        return _error(_redact(f"Invalid input: {err}", api_key))
    except unimatch_metric.UniMatchError as err:
        return _error(_redact(f"{backend[0].upper()}{backend[1:]} failed: {err}", api_key))
    except ImportError as err:
        return _error(f"The offline scorer is not installed: {err}")
    except Exception as err:  # never a stack trace in the page; the key is never logged
        logger.error("unexpected %s: %s", type(err).__name__, _redact(str(err), api_key))
        return _error(_redact(f"Unexpected error ({type(err).__name__}): {err}", api_key))
    status = _redact(_used(result["config"], result["details"][0]), api_key)
    return (
        f'<p class="um-status" id="um-status-ok">{html.escape(status)}</p>',
        view.figures_html(),
        view.alignment_html(),
        view.matrix_html(),
        view.units_html(),
    )


def _used(config: dict, details: dict) -> str:
    """What segmented and scored the feedback, from the result's ``config`` (no key in it),
    and how many units grounding zeroed when the paragraph was given."""

    def name(backend: dict) -> str:
        model = backend.get("model")
        return f"{backend['name']} ({model})" if model else backend["name"]

    used = f"Segmented by {name(config['segmenter'])}; scored by {name(config['scorer'])}."
    off = details["off_paragraph_units"]
    if off is None:
        return used
    return f"{used} Checked against the paragraph: {len(off)} unit(s) about another text, scored 0."


def build_demo() -> gr.Blocks:
    """The Gradio interface."""
    with gr.Blocks(title="UniMatch") as demo:
        gr.Markdown("# UniMatch: does the model give the instructor's feedback?")
        gr.Markdown(DESCRIPTION)
        with gr.Row():
            with gr.Column(scale=3):
                paragraph = gr.Textbox(
                    label="Student paragraph (optional: feedback about another text scores 0)",
                    lines=4,
                    elem_id="um-paragraph",
                )
                comments = gr.Textbox(
                    label="Instructor comments (one per line)", lines=4, elem_id="um-comments"
                )
                feedback = gr.Textbox(label="Model feedback", lines=5, elem_id="um-feedback")
            with gr.Column(scale=2):
                scorer = gr.Radio(
                    [OFFLINE, LLM], value=OFFLINE, label="Scorer", elem_id="um-scorer"
                )
                with gr.Group(visible=False) as llm_fields:
                    base_url = gr.Textbox(
                        label="Base URL",
                        placeholder="https://api.openai.com/v1 (default)",
                        elem_id="um-base-url",
                    )
                    model = gr.Textbox(
                        label="Model", placeholder="e.g. gpt-5-nano", elem_id="um-model"
                    )
                    api_key = gr.Textbox(
                        label="API key (never stored)",
                        type="password",
                        elem_id="um-api-key",
                    )
                use_threshold = gr.Checkbox(
                    label="Threshold variant (count pairs scoring ≥ τ)", elem_id="um-threshold"
                )
                tau = gr.Slider(0.5, 4, value=3, step=0.5, label="τ", elem_id="um-tau")
                run = gr.Button("Score", variant="primary", elem_id="um-run")
        gr.Examples(
            [[ex["paragraph"], "\n".join(ex["comments"]), ex["feedback"]] for ex in EXAMPLES],
            inputs=[paragraph, comments, feedback],
            example_labels=[ex["name"] for ex in EXAMPLES],
        )
        status = gr.HTML(elem_id="um-status")
        figures = gr.HTML(elem_id="um-figures")
        gr.Markdown("### Alignment")
        alignment = gr.HTML(elem_id="um-alignment")
        gr.Markdown("### Score matrix (rows: instructor units, columns: model units)")
        matrix = gr.HTML(elem_id="um-matrix")
        gr.Markdown("### Feedback units")
        units = gr.HTML(elem_id="um-units")

        scorer.change(lambda s: gr.update(visible=s == LLM), scorer, llm_fields)
        run.click(
            score_paragraph,
            [paragraph, comments, feedback, scorer, base_url, model, api_key, use_threshold, tau],
            [status, figures, alignment, matrix, units],
            api_name="score",
            concurrency_limit=4,  # a slow LLM endpoint does not hold up other visitors
        )
    return demo


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    """Serve the demo on ``--host``/``--port`` (default 127.0.0.1 and $GRADIO_SERVER_PORT or
    7860)."""
    parser = argparse.ArgumentParser(description="Serve the UniMatch demo.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    )
    args = parser.parse_args(argv)
    theme = gr.themes.Default(
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "monospace"],
    )
    demo.queue().launch(
        server_name=args.host,
        server_port=args.port,
        theme=theme,
        css=CSS,
        # Gradio would otherwise keep each run's inputs, the API key among them, in the browser.
        run_history=False,
    )


if __name__ == "__main__":
    main()
