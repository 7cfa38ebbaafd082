"""Imports go one way down the layers, with no cycles, and no module holds two jobs (> 600 lines).

The layer order is stated here, in :data:`LAYERS`, and only here; the package docstring of
``verifai_desktop`` repeats it in prose (``../shared/STYLE.md``, "Dependency direction"). Every
module of the package is parsed with :mod:`ast`; an import inside a function counts like one at
the top (deferring a heavy library is fine, reaching up a layer is not). Imports under
``if TYPE_CHECKING:`` are for annotations only and are exempt.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "verifai_desktop"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "verifai_desktop",  # the package itself: __version__ and this order in prose
            "recognition",
            "reference",
            "domain",
            "errors",
            "names",
            "words",
            "private",
            "offline",
            "hashing",
            "foreground",
            "paths",
            "settings_checks",
            "citation_settings",
            "settings",
            "logs",
            "hardware",
            "codec",
        ),
    ),
    ("model files", ("hub", "modelstore", "onnx_tools")),
    ("documents and indexes", ("ingest", "index")),
    ("store", ("store",)),
    ("stages", ("retrieve", "generate", "verify")),
    ("use cases", ("contradictions", "rerank", "pipeline", "keep", "audit")),
    ("presentation", ("presentation", "citations", "answer_files", "audit_view", "check_view")),
    ("evaluation", ("evaluate",)),
    ("front ends", ("cli", "ui", "__main__")),
)
"""Bottom to top. A module may import from its own layer and the layers below it, never above.
An entry names a top-level module or package of ``verifai_desktop`` (``"verifai_desktop"`` is
the package's ``__init__``)."""

MAX_LINES = 600
"""A module past this holds two jobs: split it by responsibility (STYLE.md)."""

SIZE_CHECKED = ("verifai_desktop", "models", "benchmarks")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def _owner(name: str) -> str | None:
    """The module of ``MODULES`` that an imported dotted name lands in (longest prefix)."""
    while name:
        if name in MODULES:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module of the package, line) for every import in ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_nodes(tree)
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from pkg import mod`` imports the submodule when there is one.
            targets = [f"{stem}.{alias.name}" for alias in node.names] or [stem]
        for target in targets:
            if target.split(".")[0] != PACKAGE:
                continue
            owner = _owner(target)
            if owner is not None and owner != module:
                yield owner, node.lineno


def _unit(module: str) -> str:
    """The top-level module or package of ``verifai_desktop`` that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def _layer_of(module: str) -> int:
    unit = _unit(module)
    for index, (_, members) in enumerate(LAYERS):
        if unit in members:
            return index
    raise AssertionError(f"{module}: its top-level name {unit!r} is in no layer of LAYERS")


EDGES: dict[str, dict[str, int]] = defaultdict(dict)
for _module, _path in MODULES.items():
    for _target, _line in _imports(_module, _path):
        EDGES[_module].setdefault(_target, _line)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer_of(module)


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for module, targets in sorted(EDGES.items()):
        for target, line in sorted(targets.items()):
            if _layer_of(target) > _layer_of(module):
                upward.append(
                    f"{MODULES[module].relative_to(ROOT)}:{line}: {module} "
                    f"({LAYERS[_layer_of(module)][0]}) imports {target} "
                    f"({LAYERS[_layer_of(target)][0]})"
                )
    assert upward == []


def test_no_cycle_between_modules() -> None:
    graph = {module: set(targets) for module, targets in EDGES.items()}
    assert _cycles(graph) == []


def test_no_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in EDGES.items():
        for target in targets:
            if _unit(module) != _unit(target):
                graph[_unit(module)].add(_unit(target))
    assert _cycles(dict(graph)) == []


def test_the_package_docstring_states_the_same_order() -> None:
    init = ROOT / PACKAGE / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    positions = [doc.find(f"``{name}``") for name, _ in LAYERS]
    assert -1 not in positions, f"layer names missing from the package docstring: {positions}"
    assert positions == sorted(positions)


@pytest.mark.parametrize("folder", SIZE_CHECKED)
def test_no_module_over_600_lines(folder: str) -> None:
    too_long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from verifai_desktop.ui import app\n"
        "def late() -> None:\n"
        "    from verifai_desktop import pipeline\n"
        "    from . import codec\n"
    )
    path = tmp_path / "x.py"
    path.write_text(source, encoding="utf-8")
    found = {target for target, _ in _imports("verifai_desktop.domain", path)}
    assert "verifai_desktop.pipeline" in found
    assert "verifai_desktop.ui.app" not in found
