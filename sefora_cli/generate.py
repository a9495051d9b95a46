"""``sefora generate``: paragraph feedback, or overall assessments of whole drafts, from an
LLM under prompt configurations, resumably."""

from __future__ import annotations

import argparse
import os
from typing import Any

from sefora_cli.options import reject_unused, show_progress
from sefora_grid.backends import Backend, OpenAIBackend, TransformersBackend
from sefora_grid.context import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_NEW_TOKENS,
    ApproxCounter,
    TokenizerCounter,
)
from sefora_grid.documents import DEFAULT_MAX_NEW_TOKENS as DOCUMENT_MAX_NEW_TOKENS
from sefora_grid.documents import (
    DocumentConfig,
    document_configs,
    generate_document_run,
    is_document_config,
    load_document_targets,
    overall_comment_pool,
)
from sefora_grid.errors import GridError
from sefora_grid.generate import exemplar_pool, generate_run, load_targets, parse_configs


def register(subparsers: Any) -> None:
    """Add the ``generate`` subcommand."""
    parser = subparsers.add_parser(
        "generate",
        description="Generate feedback for every annotated paragraph of a split (paragraph "
        "configurations) or an overall assessment of every draft with an instructor's overall "
        "comment (doc-* configurations), one JSONL per configuration in --out (resumable: a "
        "re-run skips rows already written).",
    )
    parser.add_argument(
        "--config",
        action="append",
        required=True,
        metavar="ID",
        help="configuration id (repeatable; `sefora configs` lists them; 'paper' = the 20, "
        "'documents' = the 8 document-level ones)",
    )
    parser.add_argument("--split", default="test", help="dataset split (default: test)")
    parser.add_argument("--data", default="sefora", help="built dataset folder (default: sefora)")
    parser.add_argument("--backend", choices=("openai", "transformers"), default="openai")
    parser.add_argument(
        "--model", required=True, help="model name (openai) or local model folder (transformers)"
    )
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. a vLLM server")
    parser.add_argument(
        "--api-key", help="API key (default: $OPENAI_API_KEY; never logged or written)"
    )
    parser.add_argument(
        "--tokenizer",
        help="local tokenizer folder for exact token counts with the openai backend "
        "(default: characters / 4)",
    )
    parser.add_argument("--limit", type=int, help="only the first N paragraphs/drafts (by id)")
    parser.add_argument("--out", default="runs", help="output folder (default: runs)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="prompt + output tokens")
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        help=f"default: {DEFAULT_MAX_NEW_TOKENS} per paragraph, "
        f"{DOCUMENT_MAX_NEW_TOKENS} per draft",
    )
    for flag, (backend, kind, default, what) in BACKEND_OPTIONS.items():
        parser.add_argument(flag, type=kind, help=f"{backend}: {what} (default: {default})")
    parser.set_defaults(func=run_generate)


#: Options of one backend only: flag -> (backend, type, default, help). Given with the other
#: backend they would be ignored, so that is an error.
BACKEND_OPTIONS: dict[str, tuple[str, type, Any, str]] = {
    "--concurrency": ("openai", int, 4, "requests in flight"),
    "--timeout": ("openai", float, 120.0, "seconds per request"),
    "--max-retries": ("openai", int, 3, "retries per request"),
    "--batch-size": ("transformers", int, 4, "prompts per batch"),
    "--device": ("transformers", str, "cpu", "torch device"),
}


def _option(args: argparse.Namespace, flag: str) -> Any:
    """The value of a backend-only option, or its default."""
    value = getattr(args, flag.lstrip("-").replace("-", "_"))
    return BACKEND_OPTIONS[flag][2] if value is None else value


def _others(backend: str) -> list[str]:
    """The flags of the other backend."""
    return [flag for flag, (owner, *_) in BACKEND_OPTIONS.items() if owner != backend]


def make_backend(args: argparse.Namespace, max_new_tokens: int) -> Backend:
    """The backend the command-line arguments describe."""
    if args.backend == "transformers":
        return TransformersBackend(
            args.model, max_new_tokens, _option(args, "--batch-size"), _option(args, "--device")
        )
    counter = TokenizerCounter.from_path(args.tokenizer) if args.tokenizer else ApproxCounter()
    return OpenAIBackend(
        model=args.model,
        base_url=args.base_url,
        api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
        max_new_tokens=max_new_tokens,
        counter=counter,
        concurrency=_option(args, "--concurrency"),
        timeout=_option(args, "--timeout"),
        max_retries=_option(args, "--max-retries"),
    )


def check_backend_options(args: argparse.Namespace) -> None:
    """`OptionError` for an option of the other backend (it would be ignored)."""
    if args.backend == "transformers":
        flags = ["--base-url", "--api-key", "--tokenizer", *_others("transformers")]
        reject_unused(args, flags, "they are options of --backend openai")
    else:
        reject_unused(args, _others("openai"), "they are options of --backend transformers")


def run_generate(args: argparse.Namespace) -> int:
    """Generate every requested configuration in turn; print a summary line per run."""
    check_backend_options(args)
    if args.limit is not None and args.limit < 1:
        raise GridError(f"--limit must be at least 1, got {args.limit}")
    doc_specs = [c for c in args.config if c == "documents" or is_document_config(c)]
    specs = [c for c in args.config if c not in doc_specs]
    configs = parse_configs(specs)
    progress = show_progress(args)
    summaries = []
    if configs:
        targets = load_targets(args.data, args.split, args.limit)
        if not targets:
            raise GridError(f"{args.data}: split {args.split!r} has no annotated paragraphs")
        pool = exemplar_pool(args.data) if any(c.few_shot for c in configs) else None
        max_new = args.max_new_tokens or DEFAULT_MAX_NEW_TOKENS
        backend = make_backend(args, max_new)
        for config in configs:
            summaries.append(
                generate_run(
                    config, targets, backend, args.out, args.split, pool, args.budget, max_new,
                    progress=progress,
                )
            )  # fmt: skip
    doc_configs = parse_document_configs(doc_specs)
    if doc_configs:
        drafts = load_document_targets(args.data, args.split, args.limit)
        if not drafts:
            raise GridError(
                f"{args.data}: split {args.split!r} has no draft with an overall comment"
            )
        doc_pool = overall_comment_pool(args.data) if any(c.few_shot for c in doc_configs) else None
        max_new = args.max_new_tokens or DOCUMENT_MAX_NEW_TOKENS
        backend = make_backend(args, max_new)
        for doc_config in doc_configs:
            summaries.append(
                generate_document_run(
                    doc_config, drafts, backend, args.out, args.split, doc_pool, args.budget,
                    max_new, progress=progress,
                )
            )  # fmt: skip
    for summary in summaries:
        print(
            f"{summary['path']}: {summary['written']} written, {summary['skipped']} already "
            f"there, {summary['total']} rows"
        )
    return 0


def parse_document_configs(specs: list[str]) -> list[DocumentConfig]:
    """Document-level configurations from ``--config`` values ('documents' = all 8)."""
    configs: list[DocumentConfig] = []
    for spec in specs:
        for config in document_configs() if spec == "documents" else [DocumentConfig.parse(spec)]:
            if config not in configs:
                configs.append(config)
    return configs
