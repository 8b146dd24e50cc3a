"""The app graph has one direction: apps below don't import the ones above.

project < social < notifications < delivery < actions. A module of one app may import
a lower app's modules; views, APIs, admin pages, URLs and commands (the edge) may import
any app and `actions`. Imports inside functions count too. Reads don't import writes:
no selectors module imports a services (write) module. No source file is over 500 lines.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["project", "social", "notifications", "delivery", "actions"]
EDGE = {"views", "apis", "feed_apis", "admin_views", "urls", "api_urls", "admin_site", "templatetags", "management"}
# Write modules that are not called `services` (the split of delivery's and the feed's writes).
WRITES = {
    "delivery.preparation",
    "delivery.leases",
    "delivery.dispatch",
    "notifications.feed",
    "notifications.feed_retries",
    "notifications.like_fold",
    "notifications.like_fold_steps",
}
LINES_MAX = 500


def _modules() -> dict[str, Path]:
    found = {}
    for app in LAYERS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in modules:
                candidate = candidate.rpartition(".")[0]
            if candidate:
                found.add(candidate)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, modules) for name, path in modules.items()}


def _app(module: str) -> str:
    return module.split(".")[0]


def _edge(module: str) -> bool:
    return bool(EDGE & set(module.split(".")[1:]))


def test_no_module_imports_an_app_that_imports_it_back():
    graph = _graph()
    back = [
        (module, other)
        for module, imported in graph.items()
        for other in imported
        if _app(other) != _app(module) and module in graph[other]
    ]
    assert back == []


def test_apps_below_do_not_import_apps_above():
    upward = sorted(
        (module, other)
        for module, imported in _graph().items()
        if not _edge(module)
        for other in imported
        if LAYERS.index(_app(other)) > LAYERS.index(_app(module))
    )
    assert upward == []


def test_nothing_below_the_edge_imports_the_edge():
    inward = sorted(
        (module, other)
        for module, imported in _graph().items()
        if not _edge(module)
        for other in imported
        if _edge(other) and _app(other) != _app(module)
    )
    assert inward == []


def _selectors(module: str) -> bool:
    return module.rpartition(".")[2].endswith("selectors")


def _writes(module: str) -> bool:
    return module.rpartition(".")[2].endswith("services") or module in WRITES


def test_no_selectors_module_imports_a_write_module():
    graph = _graph()
    assert any(_selectors(module) for module in graph) and all(module in graph for module in WRITES)
    reads_writes = sorted(
        (module, other)
        for module, imported in graph.items()
        if _selectors(module)
        for other in imported
        if _writes(other)
    )
    assert reads_writes == []


def test_no_source_file_over_500_lines_outside_tests():
    # staticfiles/ and var/ hold what `make run` collects and writes, not sources
    skip = {"tests", ".venv", "node_modules", "migrations", ".git", "staticfiles", "var"}
    long = sorted(
        (str(path.relative_to(ROOT)), lines)
        for suffix in ("*.py", "*.js", "*.css", "*.html")
        for path in ROOT.rglob(suffix)
        if not skip & set(path.relative_to(ROOT).parts)
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > LINES_MAX
    )
    assert long == []
