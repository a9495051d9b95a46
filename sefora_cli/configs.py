"""``sefora configs``: list the prompt configurations of the generation grid."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sefora_grid.documents import document_configs
from sefora_grid.prompts import all_configs


def register(subparsers: Any) -> None:
    """Add the ``configs`` subcommand."""
    parser = subparsers.add_parser(
        "configs",
        description="List every prompt configuration id with its toggles. The paper's "
        "per-model grid is the 20 marked 'paper' (chain-of-thought only with V1 zero-shot); "
        "anchored ones ask for quoted spans; doc-* ones assess whole drafts.",
    )
    parser.add_argument("--paper", action="store_true", help="only the paper's 20 per model")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run_configs)


def run_configs(args: argparse.Namespace) -> int:
    """Print the configurations as a table (or JSON)."""
    configs = all_configs(paper_only=args.paper)
    rows: list[dict[str, Any]] = [
        {
            "id": c.id,
            "template": c.template,
            "guided": c.guided,
            "rubric": c.rubric,
            "few_shot": c.few_shot,
            "cot": c.cot,
            "anchored": c.anchored,
            "paper": c.in_paper_grid,
        }
        for c in configs
    ]
    if not args.paper:
        rows += [
            {
                "id": d.id,
                "template": "doc",
                "guided": d.guided,
                "rubric": d.rubric,
                "few_shot": d.few_shot,
                "cot": False,
                "anchored": False,
                "paper": False,
            }
            for d in document_configs()
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["id"]) for r in rows)
    print(f"{'id':<{width}}  template  guided  rubric  few-shot  cot  anchored  paper")
    for r in rows:
        flags = [r["guided"], r["rubric"], r["few_shot"], r["cot"], r["anchored"], r["paper"]]
        marks = ["yes" if f else "-" for f in flags]
        print(
            f"{r['id']:<{width}}  {r['template']:<8}  {marks[0]:<6}  {marks[1]:<6}  "
            f"{marks[2]:<8}  {marks[3]:<3}  {marks[4]:<8}  {marks[5]}"
        )
    return 0
