"""Regenerate the committed LibreOffice-exported fixtures (``tests/fixtures/exported``).

Each fixture is a draft written here (no corpus text), laid out by LibreOffice in a
chosen style through ``make_libreoffice`` and annotated from the exported glyph boxes:
``<name>.pdf`` plus ``<name>.json`` with the expected parse, the style, the layout
features the generator found (``make_libreoffice.layout_features``) and the features the
fixture exists for (``wants``). A fixture whose layout does not show a wanted feature is
retried with slightly different text (page-break fixtures need a paragraph to end on a
page's last line) and the script fails if none does. Needs LibreOffice (see
``make_libreoffice``); the tests that use the fixtures do not.

    python -m tests.make_exported_fixtures [tests/fixtures/exported]   # from the repository root
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

from tests.make_libreoffice import Job, LoStyle, soffice, write_pdfs

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "exported"

SENTENCES = [
    "The community garden behind the laundromat opened the spring I turned fifteen.",
    "Nobody on our street believed that tomatoes could grow in soil that used to be a parking lot.",
    "My neighbour Mrs. Alvarez brought folding chairs, a radio and a thermos of sweet coffee"
    " every Saturday.",
    "We learned which weeds to pull by pulling the wrong ones first.",
    "By July the beans had climbed the chain-link fence and were peering into the alley.",
    "I kept a notebook of what we planted, what died, and what surprised us by coming back.",
    "The first harvest filled two shopping bags, and we argued for an hour about who deserved"
    " the peppers.",
    "Some evenings the only sound was the hose hissing against the dry ground.",
    "When the city threatened to sell the lot, forty people signed a petition in a single"
    " afternoon.",
    "I had never seen my street agree about anything before that summer.",
    "The bus to school took forty minutes, which was long enough to finish a chapter or a nap.",
    "A driver named Curtis greeted every passenger by name, even the ones who never answered.",
    "Rain made the windows fog up, and the younger kids drew faces that dripped as the bus"
    " turned corners.",
    "I started writing down overheard sentences, because strangers say the strangest true things.",
    "One morning a man explained to nobody in particular how to repair a bicycle with a spoon.",
    "The route passed a bakery whose smell reached us two stops before we saw it.",
    "Cooking for my family began as a chore and turned into the part of the day I guarded most.",
    "My grandmother measured nothing; she tasted, frowned, and added a pinch of whatever was"
    " nearest.",
    "The first time I burned the rice, my little brother declared it a new dish and ate all of it.",
    "A recipe, I decided, is a rumour about a meal rather than a set of instructions.",
    "We ate late, with the television off, and talked about whoever had annoyed us that day.",
    "The kitchen window faced a brick wall, so we painted a sky on the bricks.",
    "In chemistry class we measured everything twice and still got a different answer than the"
    " textbook.",
    "Our teacher said that a surprising result is a question the experiment is asking you.",
    "I liked the quiet minutes while a solution slowly changed colour.",
    "My lab partner labelled every beaker with a joke, which made cleaning up almost pleasant.",
    "The fire alarm went off once, though the smoke came from the cafeteria and not from us.",
    "Later I realised that the garden, the bus and the kitchen had taught me the same patient"
    " habit.",
    "You watch, you wait, you write it down, and you try again the next day.",
    "That habit is what I bring with me to college, along with a jar of seeds from the garden.",
]
COMPOUNDS = [
    "eighteen-year-old",
    "well-known",
    "long-distance",
    "self-taught",
    "old-fashioned",
    "twenty-five-minute",
    "mother-in-law",
    "up-to-date",
    "hard-working",
    "first-generation",
    "state-of-the-art",
    "one-bedroom",
    "half-finished",
    "part-time",
    "record-breaking",
]
COMMENTS = [
    "Great line!",
    "Can you expand on this in the next draft?",
    "This sentence is hard to follow.",
    "Nice detail.",
    "Why does this matter to you?",
    "Consider cutting this.",
    "",
]


def _ann(body: str, kind: str, start: int, end: int, comment: str, color: str | None) -> dict:
    ann = {
        "type": kind,
        "comment": comment,
        "context_left": body[max(0, start - 20) : start],
        "context_right": body[end : end + 20],
    }
    if kind != "note":
        ann["text"] = body[start:end]
    if kind == "highlight":
        ann["color"] = color
    return ann


def _word_starts(body: str) -> list[int]:
    return [i for i in range(len(body)) if not body[i].isspace() and (i == 0 or body[i - 1] == " ")]


def annotations(body: str, rng: random.Random, long: bool = False) -> list[dict]:
    """A few instructor annotations on a paragraph: highlights (some ending with their
    space, one over most of the paragraph when ``long``), a note, sometimes a strikeout."""
    starts = _word_starts(body)
    if len(starts) < 6:
        return []
    out = []
    for _ in range(rng.randint(1, 2)):
        a = rng.randrange(len(starts) - 3)
        b = min(len(starts) - 1, a + rng.randint(1, 6))
        end = starts[b] - (0 if rng.random() < 0.3 else 1)  # some keep their trailing space
        out.append(
            _ann(
                body,
                "highlight",
                starts[a],
                end,
                rng.choice(COMMENTS),
                rng.choice(["pink", "green", "yellow", "generic"]),
            )
        )
    note_at = starts[rng.randrange(1, len(starts))]
    out.append(_ann(body, "note", note_at, note_at, rng.choice(COMMENTS[:-1]), None))
    if rng.random() < 0.4:
        a = rng.randrange(len(starts) - 2)
        out.append(
            _ann(body, "strikeout", starts[a], starts[a + 1] - 1, rng.choice(COMMENTS), None)
        )
    if long:
        out.append(_ann(body, "highlight", starts[2], len(body) - 1, "A long stretch.", "green"))
    return out


def prose(rng: random.Random, sentences: int, extra: list[str] = ()) -> str:
    picked = [rng.choice(SENTENCES) for _ in range(sentences)] + list(extra)
    rng.shuffle(picked)
    return " ".join(picked)


def compounds(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        w = rng.choice(COMPOUNDS)
        out.append(f"The {w} plan looked {rng.choice(COMPOUNDS)} to everyone.")
    return " ".join(out)


def draft(title: str | None, bodies: list[str], rng: random.Random, long_at: int = -1) -> dict:
    paragraphs = [{"body": title, "annotations": []}] if title else []
    for i, body in enumerate(bodies):
        paragraphs.append({"body": body, "annotations": annotations(body, rng, i == long_at)})
    return {
        "paragraphs": paragraphs,
        "annotations": [{"grades": {}, "comment": "Overall: a careful, vivid draft."}],
    }


def base_style(**changes) -> LoStyle:
    style = LoStyle(
        font="Liberation Serif",
        size=12.0,
        spacing=1.15,
        separation="space",
        space_after=8.0,
        indent=0.0,
        justify=False,
        page=(612.0, 792.0),
        margins=(72.0, 72.0, 72.0, 72.0),
        title=True,
        title_size=16.0,
        footer=False,
        stamp=True,
        stamp_text="Submitted: Oct 3, 2024 9:14 PM",
        surname="Okafor",
        hyphenate=False,
        ligatures=True,
        widow_control=True,
        tab_stop=720,
    )
    return replace(style, **changes)


def specs(variant: int) -> list[tuple[str, dict, LoStyle, list[str]]]:
    """(name, draft, style, wanted features) of every fixture; ``variant`` changes the
    text of page-break fixtures a little (one sentence more per step)."""
    out = []

    def rng(name: str) -> random.Random:
        return random.Random(f"{name}:{variant}")

    r = rng("left")
    out.append(
        (
            "left-aligned",
            draft(
                "The Garden Behind the Laundromat",
                [prose(r, k) for k in (4, 6, 3, 7, 5, 4)],
                r,
                long_at=1,
            ),
            base_style(),
            [],
        )
    )
    r = rng("justified")
    out.append(
        (
            "justified-indent",
            draft("Forty Minutes on the Bus", [prose(r, k) for k in (5, 6, 4, 7, 3)], r, long_at=2),
            base_style(
                font="Liberation Sans",
                size=11.0,
                spacing=2.0,
                separation="indent",
                space_after=0.0,
                indent=36.0,
                justify=True,
                surname="Nguyen",
            ),
            [],
        )
    )
    r = rng("hyphen-left")
    out.append(
        (
            "hyphens-left",
            draft(None, [compounds(r, 9) for _ in range(4)], r),
            base_style(font="Carlito", title=False),
            ["line_end_hyphen"],
        )
    )
    r = rng("hyphen-justified")
    out.append(
        (
            "hyphens-justified",
            draft("Compound Interest", [compounds(r, 9) for _ in range(4)], r),
            base_style(font="DejaVu Serif", size=11.0, justify=True, ligatures=False),
            ["line_end_hyphen"],
        )
    )
    r = rng("autohyphen")
    out.append(
        (
            "auto-hyphenation",
            draft(
                "Unbelievably Comprehensive Considerations", [prose(r, k) for k in (6, 7, 5, 6)], r
            ),
            base_style(size=11.0, justify=True, hyphenate=True, margins=(90.0, 90.0, 72.0, 72.0)),
            [],
        )
    )
    r = rng("cjk")
    chinese = (
        "当我第一次踏上这座城市的时候，街道两旁的梧桐树正在落叶，空气里有烤红薯的味道。"
        "我在笔记本上写下每一个新的发现，因为我担心自己会很快忘记这些细小的惊喜。"
        "后来我才明白，熟悉一个地方需要时间，也需要愿意迷路的勇气。"
    )
    mixed = (
        "My grandmother called the dish 红烧肉, and she never wrote the recipe down. "
        + prose(r, 3)
        + " Every winter she made 饺子 with the whole family around one table."
    )
    out.append(
        (
            "cjk",
            draft("Two Languages at One Table", [prose(r, 4), chinese, mixed, prose(r, 3)], r),
            base_style(font="Carlito"),
            ["cjk"],
        )
    )
    r = rng("cjk-double")
    out.append(
        (
            "cjk-double-spaced",
            draft(None, [prose(r, 3), chinese + chinese, mixed, prose(r, 4), mixed], r),
            base_style(
                font="DejaVu Sans",
                size=12.0,
                spacing=2.0,
                space_after=6.0,
                justify=True,
                title=False,
            ),
            ["cjk"],
        )
    )
    r = rng("fallback")
    fallback = (
        "My grandmother answered every complaint with ɔdɔ yɛ dɛ, which means that love is "
        "sweet, and she said mepɛ wo whenever she left a room. " + prose(r, 2) + " I still "
        "write ɔdɔ in the margins of my notebooks."
    )
    out.append(
        (
            "fallback-font",
            draft("Sweet", [prose(r, 3), fallback, prose(r, 3)], r),
            base_style(font="Caladea"),
            ["fallback_font"],
        )
    )
    for name, style, want in (
        ("page-break-left", base_style(space_after=12.0), "page_break_room"),
        (
            "page-break-justified",
            base_style(font="Carlito", justify=True, space_after=8.0),
            "page_break_full",
        ),
    ):
        r = rng(name)
        bodies = [prose(r, r.randint(3, 7)) for _ in range(16)]
        out.append((name, draft("What the Garden Taught Me", bodies, r), style, [want]))
    r = rng("tabs")
    bodies = [("\t" if i % 3 else "") + prose(r, k) for i, k in enumerate((3, 5, 4, 6, 2, 5, 4))]
    out.append(
        (
            "tabs-double-spaced",
            draft("Recipes Are Rumours", bodies, r),
            base_style(spacing=2.0, space_after=6.0, surname="Kim"),
            [],
        )
    )
    r = rng("tabs-indent")
    bodies = [("\t" if i % 2 else "") + prose(r, k) for i, k in enumerate((3, 4, 4, 5, 3))]
    out.append(
        (
            "tabs-over-indent",
            draft(None, bodies, r),
            base_style(separation="indent", space_after=0.0, indent=28.35, title=False),
            [],
        )
    )
    r = rng("spaces")
    bodies = ["      " + prose(r, k) for k in (2, 1, 3, 1, 2, 1, 2, 1, 1, 2)]
    out.append(
        (
            "leading-spaces",
            draft(None, bodies, r),
            base_style(separation="indent", space_after=0.0, title=False, surname="Rossi"),
            [],
        )
    )
    r = rng("ligatures")
    liga = (
        "The office staff found a fine, fluffy waffle in the first floor refrigerator, "
        "and the affair filled the afternoon. "
    )
    for name, on in (("ligatures-on", True), ("ligatures-off", False)):
        out.append(
            (
                name,
                draft(
                    "Fifty Fine Offices",
                    [liga + prose(r, 3), liga * 2, prose(r, 4) + " " + liga],
                    r,
                ),
                base_style(font="DejaVu Serif", size=11.0, ligatures=on, justify=not on),
                [],
            )
        )
    r = rng("blank")
    out.append(
        (
            "blank-lines",
            draft("Lab Notes", [prose(r, k) for k in (3, 4, 2, 5, 3, 4)], r),
            base_style(font="Liberation Sans", separation="blank", space_after=0.0, spacing=1.5),
            [],
        )
    )
    r = rng("urls")
    refs = [
        "Alvarez, M. (2023). Growing food on reclaimed lots. Retrieved from "
        "https://www.example.org/community/gardens/reclaimed-lots/2023/report-final-version.html",
        "City Planning Office. Vacant lot inventory."
        " https://data.example.gov/planning/vacant-lots?year=2024&format=table",
        prose(r, 3),
    ]
    out.append(("urls", draft("References", refs, r), base_style(font="Carlito", justify=True), []))
    r = rng("dashes")
    dashy = " ".join(
        f"{s[:-1]}—and then {rng('d').choice(SENTENCES).lower()}" for s in SENTENCES[:8]
    )
    out.append(
        (
            "dashes",
            draft(None, [dashy, prose(r, 3)], r),
            base_style(font="Liberation Serif", title=False, justify=False),
            [],
        )
    )
    r = rng("a4")
    out.append(
        (
            "a4-narrow",
            draft("Curtis", [prose(r, k) for k in (6, 5, 7, 4)], r),
            base_style(
                font="DejaVu Sans",
                size=10.0,
                page=(595.3, 841.9),
                margins=(56.7, 56.7, 56.7, 56.7),
                spacing=1.0,
                justify=True,
                footer=True,
            ),
            [],
        )
    )
    r = rng("dialogue")
    lines = [
        f"“{s}” {r.choice(['she said', 'he asked', 'I answered', 'Curtis laughed'])}."
        for s in (r.choice(SENTENCES)[:-1] for _ in range(18))
    ]
    out.append(
        (
            "dialogue",
            draft("Overheard", lines, r),
            base_style(spacing=1.15, space_after=10.0, stamp=False),
            [],
        )
    )
    r = rng("breaks")
    bodies = [
        prose(r, 2) + "\n" + prose(r, 2),
        prose(r, 3),
        "Ingredients:\nrice\nbeans\ncoriander",
        prose(r, 3),
    ]
    out.append(
        (
            "line-breaks",
            draft("Notebook", bodies, r),
            base_style(font="Caladea", space_after=12.0),
            [],
        )
    )
    r = rng("scripts")
    scripts = (
        "At the festival a poster said नमस्ते in orange letters, and a stall sold "
        "kimchi under a sign reading 김치. " + prose(r, 3)
    )
    out.append(
        (
            "scripts",
            draft(None, [prose(r, 2), scripts, prose(r, 2)], r),
            base_style(font="Liberation Sans", title=False),
            [],
        )
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path, nargs="?", default=FIXTURES)
    ap.add_argument("--tries", type=int, default=300)
    args = ap.parse_args(argv)
    if soffice() is None:
        print("LibreOffice (soffice) is not installed", file=sys.stderr)
        return 2
    args.outdir.mkdir(parents=True, exist_ok=True)
    pending = {name for name, *_ in specs(0)}
    with tempfile.TemporaryDirectory() as tmp:
        for first in range(0, args.tries, 10):
            todo = [
                (variant, spec)
                for variant in range(first, min(args.tries, first + 10))
                for spec in specs(variant)
                if spec[0] in pending and (variant == 0 or spec[3])
            ]
            if not todo:
                break
            jobs = [
                Job(spec[1], Path(tmp) / f"{spec[0]}-{variant}.pdf", 0, spec[2])
                for variant, spec in todo
            ]
            for (_, (name, _, style, wants)), job, (expected, _, report) in zip(
                todo, jobs, write_pdfs(jobs, Path(tmp)), strict=True
            ):
                if name not in pending or any(not report["features"].get(w) for w in wants):
                    continue
                pending.discard(name)
                job.path.replace(args.outdir / f"{name}.pdf")
                record = {
                    "expected": expected,
                    "style": asdict(style),
                    "wants": wants,
                    "report": report,
                }
                (args.outdir / f"{name}.json").write_text(
                    json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8"
                )
                print(f"{name}: {report['pages']} page(s), features {report['features']}")
    if pending:
        print(f"no variant showed the wanted features: {sorted(pending)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
