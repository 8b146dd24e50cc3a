"""The app graph has one direction: apps below don't import the ones above.

project < social < notifications < delivery < actions. A module of one app may import
a lower app's modules; views, APIs, admin pages, URLs and commands (the edge) may import
any app and `actions`. `config` (settings, URLs, WSGI, gunicorn) sits above them all: it
may import anything, and nothing imports it (code reads `django.conf.settings`). Imports
inside functions count too. Reads don't import writes: no
selectors module imports a write module, that is a `services` module (`services.py`,
`*_services.py`, a module of a `services/` package) or a module that imports one (a fold, a
dispatcher, the split of an app's writes). A source file over 500 lines is a review
threshold (a warning); over 700 lines it fails.
"""

import ast
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["project", "social", "notifications", "delivery", "actions"]
EDGE = {"views", "apis", "admin", "admin_views", "urls", "api_urls", "admin_site", "templatetags", "management"}
LINES_REVIEW = 500
LINES_MAX = 700


def _modules() -> dict[str, Path]:
    return _modules_of(LAYERS)


def _modules_of(apps: list[str]) -> dict[str, Path]:
    found = {}
    for app in apps:
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


def test_no_app_imports_config():
    config = set(_modules_of(["config"]))
    assert config >= {"config.settings", "config.urls", "config.wsgi", "config.gunicorn"}
    modules = _modules()
    found = sorted(
        (name, module)
        for name, path in modules.items()
        for module in _imports(path, name, {**modules, **dict.fromkeys(config, path)})
        if module in config
    )
    assert found == []


def test_project_is_sub_packages_by_concern():
    """Beside its app files (apps, models, errors, clock), `project` keeps its modules in
    sub-packages by concern, never loose at the top."""
    loose = sorted(
        path.name
        for path in (ROOT / "project").glob("*.py")
        if path.stem not in {"__init__", "apps", "models", "errors", "clock"}
    )
    assert loose == []


def test_no_module_imports_an_app_that_imports_it_back():
    graph = _graph()
    back = [
        (module, other)
        for module, imported in graph.items()
        for other in imported
        if _app(other) != _app(module) and module in graph[other]
    ]
    assert back == []


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other round (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.get(module, set()) - {module}:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            circle = []
            while (popped := stack.pop()) != module:
                circle.append(popped)
            if circle:
                circles.append(sorted([module, *circle]))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_the_circle_rule_finds_circles_through_imports_inside_functions_too():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_project_core_has_no_import_circle():
    """The modules of `project` (the DynamoDB clients and schema, deploy, operations...) import
    one way, inside functions too: a module never needs one that needs it back."""
    graph = _graph()
    core = {module: imported for module, imported in graph.items() if _app(module) == "project"}
    assert _circles(core) == []


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


def _named_services(module: str) -> bool:
    return any(part.endswith("services") for part in module.split(".")[1:])


def _writes(graph: dict[str, set[str]]) -> set[str]:
    """The `services` modules, and every module that imports a write module (to a fixed point)."""
    writes = {module for module in graph if _named_services(module)}
    while grown := {
        module
        for module, imported in graph.items()
        if module not in writes and not _selectors(module) and imported & writes
    }:
        writes |= grown
    return writes


def _reads_importing_writes(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    writes = _writes(graph)
    return sorted(
        (module, other) for module, imported in graph.items() if _selectors(module) for other in imported & writes
    )


def test_the_write_rule_finds_writes_by_name_and_by_what_they_import():
    graph = {
        "app.services": set(),
        "app.billing_services": set(),
        "app.services.split": set(),
        "app.fold": {"app.models", "app.services"},  # built on a service: a write too
        "app.fold_worker": {"app.fold"},
        "app.models": set(),
        "app.encoding": set(),
        "app.selectors": {"app.models", "app.encoding"},
    }
    assert _writes(graph) == {
        "app.services",
        "app.billing_services",
        "app.services.split",
        "app.fold",
        "app.fold_worker",
    }
    assert _reads_importing_writes(graph) == []
    for write in ("app.billing_services", "app.services.split", "app.fold_worker"):
        broken = {**graph, "app.selectors": {"app.models", write}}
        assert _reads_importing_writes(broken) == [("app.selectors", write)]


def test_no_selectors_module_imports_a_write_module():
    graph = _graph()
    writes = _writes(graph)
    # The rule sees this repository's writes: named services, and those built on them.
    assert {"notifications.feed.services", "delivery.services", "delivery.dispatch"} <= writes
    assert any(_selectors(module) for module in graph)
    assert _reads_importing_writes(graph) == []


def test_the_like_fold_is_a_package_by_seam_with_a_pure_decision():
    """notifications/like_fold/: how a fold is asked for, what a batch reads, the decision, the
    writes, how they run. The decision imports nothing but model declarations (no I/O), and
    what a fold does in `social` is one module, which only the fold's run calls."""
    graph = _graph()
    seams = {f"notifications.like_fold.{seam}" for seam in ("requests", "reads", "decide", "writes", "batches")}
    assert seams <= set(graph)
    assert graph["notifications.like_fold.decide"] <= {"notifications.models"}
    assert sorted(module for module, imported in graph.items() if "social.fold_effects" in imported) == [
        "notifications.like_fold.batches"
    ]


def _source_lengths() -> list[tuple[str, int]]:
    # staticfiles/ and var/ hold what `make run` collects and writes, not sources
    skip = {"tests", ".venv", "node_modules", "migrations", ".git", "staticfiles", "var"}
    return sorted(
        (str(path.relative_to(ROOT)), len(path.read_text(encoding="utf-8").splitlines()))
        for suffix in ("*.py", "*.js", "*.css", "*.html")
        for path in ROOT.rglob(suffix)
        if not skip & set(path.relative_to(ROOT).parts)
    )


def test_no_source_file_over_700_lines_outside_tests():
    # Past 500 lines a file is worth a look at its seams (a warning); nothing is squeezed to fit.
    lengths = _source_lengths()
    for path, lines in lengths:
        if LINES_REVIEW < lines <= LINES_MAX:
            warnings.warn(f"{path} has {lines} lines: look for a seam to split it by", stacklevel=1)
    assert [(path, lines) for path, lines in lengths if lines > LINES_MAX] == []
