"""``sefora module``: copy one of the toolkit's ``evaluate`` module folders (module script,
card, Space app, requirements) out of the installed package.

``sefora module unimatch`` writes ``./unimatch``, so that ``evaluate.load("unimatch")`` finds
it (evaluate's local-folder resolution) and ``hf upload`` can publish it as it stands.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sefora_common.errors import InputError
from sefora_common.io import output_folder, write_bytes


def modules() -> dict[str, Path]:
    """The module folders the toolkit ships, by module name."""
    import feedback_judges
    import unimatch_metric

    return {
        "unimatch": Path(unimatch_metric.MODULE_PATH),
        "rubric_judge": Path(feedback_judges.MODULE_PATH),
    }


def register(subparsers: Any) -> None:
    """Add the ``module`` subcommand."""
    parser = subparsers.add_parser(
        "module",
        description="Copy an evaluate module folder of the toolkit (its script, metric card, "
        "Space app.py and requirements.txt) to OUT (default: ./NAME), where "
        "evaluate.load('NAME') finds it and `hf upload` publishes it.",
    )
    parser.add_argument("name", choices=sorted(modules()), help="the module to copy")
    parser.add_argument("--out", type=Path, help="destination folder (default: ./NAME)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Copy the folder (atomically; an earlier copy is replaced, any other folder kept)."""
    source = modules()[args.name]
    out = args.out if args.out is not None else Path(args.name)
    script = f"{args.name}.py"
    with output_folder(out, script, "sefora module", InputError) as tmp:
        for path in sorted(source.iterdir()):
            if path.is_file() and path.suffix != ".pyc":
                write_bytes(tmp / path.name, path.read_bytes())
    print(f"{out}: the {args.name} module ({', '.join(sorted(p.name for p in out.iterdir()))})")
    return 0
