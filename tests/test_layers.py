"""The import layering of docs/ARCHITECTURE.md, read from the source with ``ast``.

Every import counts, also those inside functions (a function-level import is still a
dependency), except imports under ``if TYPE_CHECKING:``. A module may import modules of its own
layer and of any layer below it; an upward import, or an import circle anywhere, fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("twinsite", "text", "chat", "approvals", "knowledge", "budget", "guards", "evals", "digest", "ops")

# Top to bottom. Transports are named by their role; every other module belongs to the layer of
# its longest listed prefix (``chat.agent.state`` is chat's vocabulary, below the agent).
TRANSPORT = re.compile(
    r"(^|\.)(admin|api|api_errors|views|consumers|routing|urls|asgi|templatetags|management)(\.|$)"
    r"|^twinsite\.(settings|logs)$|^chat\.outage$|^ops\.metrics$"
)
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("transports", ()),  # matched by TRANSPORT: pages, API, sockets, admin, commands, wiring
    # run turns (evals) or report on them and decide (digest); the owner's notices, made of digest's
    # and approvals' rows, are sent from the outbox's package
    ("reports", ("evals", "digest", "twinsite.outbox.notices", "twinsite.outbox.channels")),
    ("turns", ("chat.turns", "chat.tasks", "chat.lifecycle")),
    ("agent", ("chat.agent", "chat.providers")),
    ("chat", ("chat", "chat.agent.state")),  # chat's tables, texts, locks, checkpoints, channel layer
    ("domain", ("knowledge", "guards", "budget", "approvals", "ops")),
    ("infrastructure", ("twinsite", "text")),
)
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    if TRANSPORT.search(module):
        return "transports"
    matches = [(len(p), name) for name, prefixes in LAYERS for p in prefixes
               if module == p or module.startswith(p + ".")]
    if not matches:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return max(matches)[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    modules = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                modules[module_name(path)] = path
    return modules


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (not dependencies at run time)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            skipped.update(id(child) for child in ast.walk(node))
    return skipped


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[tuple[str, int]]:
    """(imported project module, line) for every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped = _type_checking_only(tree)
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add((target, node.lineno))
    return found


def import_graph() -> dict[str, set[tuple[str, int]]]:
    modules = project_modules()
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def circles(graph: dict[str, set[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target, _ in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_imports(graph: dict[str, set[tuple[str, int]]]) -> list[str]:
    problems = []
    for module, targets in sorted(graph.items()):
        for target, line in sorted(targets):
            if RANK[layer_of(target)] < RANK[layer_of(module)]:
                problems.append(f"{module}:{line} ({layer_of(module)}) imports {target} ({layer_of(target)})")
    return problems


def test_every_module_has_a_layer() -> None:
    for module in project_modules():
        assert layer_of(module) in RANK


def test_no_upward_import() -> None:
    assert upward_imports(import_graph()) == []


def test_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_domain_apps_never_import_chat() -> None:
    graph = import_graph()
    domain = ("knowledge", "guards", "budget", "approvals", "ops")
    found = [f"{module} imports {target}" for module, targets in graph.items()
             if module.split(".")[0] in domain and layer_of(module) != "transports"
             for target, _ in targets if target.split(".")[0] == "chat"]
    assert found == []


@pytest.mark.parametrize(("source", "expected"), [
    ("from chat import services\n", {"chat.services"}),
    ("def f():\n    from approvals.models import PendingApproval\n", {"approvals.models"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from chat.models import TurnLog\n", set()),
    ("from . import models\n", {"budget.models"}),
])
def test_imports_are_read_like_python_reads_them(tmp_path: Path, source: str, expected: set[str]) -> None:
    path = tmp_path / "budget_probe.py"
    path.write_text(source)
    modules = {"chat.services": path, "approvals.models": path, "chat.models": path, "budget.models": path,
               "budget.probe": path}
    assert {target for target, _ in imports_of("budget.probe", path, modules)} == expected


def test_an_upward_import_and_a_circle_are_found() -> None:
    graph = {"budget.services": {("chat.models", 3)}, "chat.models": {("budget.services", 5)}}
    assert upward_imports(graph) == ["budget.services:3 (domain) imports chat.models (chat)"]
    assert circles(graph) == [["budget.services", "chat.models"]]


# A module past this many lines is split into a package, a function past this many is split
# (docs/ARCHITECTURE.md, "Layers"); tests and migrations aside, benchmarks and scripts included.
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def source_files() -> list[Path]:
    found = [path for folder in (*APPS, "benchmarks", "scripts") for path in (ROOT / folder).rglob("*.py")
             if "migrations" not in path.parts]
    return sorted([*found, ROOT / "manage.py"])


def oversized(path: Path, root: Path = ROOT) -> list[str]:
    text = path.read_text()
    rel = path.relative_to(root)
    found = [f"{rel}: {text.count(chr(10))} lines"] if text.count("\n") > MAX_MODULE_LINES else []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_module_and_no_function_is_too_long_to_read() -> None:
    assert len(source_files()) > 100  # the check reads the project
    assert [problem for path in source_files() for problem in oversized(path)] == []


def test_a_long_module_and_a_long_function_are_found(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "probe.py"
    path.write_text(f"def f():\n{body}\n" + "\n" * MAX_MODULE_LINES)
    assert oversized(path, tmp_path) == [f"probe.py: {MAX_MODULE_LINES + MAX_FUNCTION_LINES + 1} lines",
                                         f"probe.py:1 f: {MAX_FUNCTION_LINES + 1} lines"]
