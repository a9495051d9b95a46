"""A minimal Space for UniMatch with the offline baseline (no API key needed)."""

from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("unimatch.py")))


def score(prediction: str, comments: str, threshold: float) -> dict:
    """UniMatch of one feedback text against instructor comments given one per line."""
    references = [line for line in comments.splitlines() if line.strip()]
    return metric.compute(
        predictions=[prediction],
        references=[references],
        threshold=threshold or None,
        return_details=True,
    )


demo = gr.Interface(
    fn=score,
    inputs=[
        gr.Textbox(label="Generated feedback", lines=4),
        gr.Textbox(label="Instructor comments (one per line)", lines=4),
        gr.Slider(0, 4, value=0, step=1, label="Threshold τ (0 = soft matching)"),
    ],
    outputs=gr.JSON(label="UniMatch"),
    title="UniMatch",
    description=(
        "Unit-level matching of writing feedback against instructor comments. This Space "
        "runs the offline baseline (rule-based segmentation, MiniLM similarity), whose "
        "agreement with human judgement is weak; see the metric card."
    ),
    examples=[
        [
            "Great opening! Try varying your sentence length.",
            "Nice hook.\nYour sentences are all the same length.",
            0,
        ]
    ],
)

if __name__ == "__main__":
    demo.launch()
