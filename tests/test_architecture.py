"""The layout holds: no import cycles among the project's modules, no private name imported
across modules (tests included), the metric never imports the dataset package, and
``import unimatch_metric`` loads neither torch, ``datasets`` nor openai."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "sefora_common",
    "sefora_dataset",
    "sefora_llm",
    "unimatch_metric",
    "feedback_judges",
    "sefora_grid",
    "sefora_cli",
)
#: Packages that make up the metric: none may import the dataset package.
METRIC = ("sefora_common", "sefora_llm", "unimatch_metric", "feedback_judges")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module of the library packages and of the tests, by dotted name."""
    found = {}
    for top in (*PACKAGES, "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imports(path: Path, name: str, modules: dict[str, Path]) -> list[tuple[str, str | None]]:
    """(imported project module, imported name or None) for every import in a file,
    function-level imports included; relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                # ``from pkg import module`` imports a module; otherwise a name of ``base``
                out.append((full, None) if full in modules else (base, alias.name))
    return [(m, n) for m, n in out if m in modules]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = project_modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for name, path in modules.items():
        for target, imported in imports(path, name, modules):
            if target != name:
                edges[name].add(target)
            if imported and imported.startswith("_") and not imported.startswith("__"):
                private.append(f"{name}: from {target} import {imported}")
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_project():
    edges, _ = graph()
    assert "unimatch_metric.scorers.learned" in edges["unimatch_metric.scorers"]
    assert "sefora_common.io" in edges["sefora_dataset.build"]


def test_no_import_cycles():
    assert cycles(graph()[0]) == []


def test_cycle_detection_works():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_names_across_modules():
    assert graph()[1] == []


def test_the_metric_never_imports_the_dataset_package():
    edges, _ = graph()
    bad = [
        f"{m} -> {t}"
        for m, targets in edges.items()
        if m.startswith(METRIC)
        for t in targets
        if t.startswith("sefora_dataset")
    ]
    assert bad == []


def test_the_metric_never_imports_its_training_at_inference():
    edges, _ = graph()
    bad = [
        f"{m} -> {t}"
        for m, targets in edges.items()
        if m.startswith("unimatch_metric") and not m.startswith("unimatch_metric.training")
        for t in targets
        if t.startswith("unimatch_metric.training")
    ]
    assert bad == []


def test_importing_the_metric_stays_light():
    code = (
        "import sys, unimatch_metric, feedback_judges\n"
        "print(sorted(m for m in ('torch', 'datasets', 'openai', 'sklearn', 'transformers')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_sefora_help_imports_no_subcommand_module():
    code = (
        "import sys\nfrom sefora_cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sefora_cli.', 'sefora_dataset',"
        " 'unimatch_metric', 'sefora_grid', 'datasets', 'numpy'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    # sefora_cli.options: the common -v/-q options every subcommand gets (argparse only)
    assert out.stdout.strip().splitlines()[-1] == "['sefora_cli.main', 'sefora_cli.options']"
