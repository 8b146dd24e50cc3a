"""The documentation holds together and says what the code has.

- README.md and docs/**/*.md link only to files and headings that exist, every document the
  source names (`docs/...`, `README`) exists, and no code, test or document speaks in issue
  numbers (they say today's reason instead).
- The reference lists are the code's, both ways: the management commands
  (docs/reference/commands.md), the settings read from the environment
  (docs/reference/settings.md), the URL patterns (docs/reference/http.md "Endpoints"), the
  DynamoDB tables (docs/reference/tables.md), the Prometheus metrics (docs/reference/metrics.md)
  and the programs of deploy/supervisord.conf (docs/reference/processes.md).
- Every repository path and dotted module name a document puts in a code span exists.
"""

import ast
import configparser
import importlib
import re
import unicodedata
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import get_commands
from django.urls import URLPattern, URLResolver, get_resolver

from project.dynamo.schema.registry import registered_models
from project.operations.health import HEALTH_PATHS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REFERENCE = ROOT / "docs" / "reference"
SOURCE_SUFFIXES = {".py", ".md", ".html", ".js"}
SKIP_DIRS = {".venv", "node_modules", ".git", "var", "staticfiles", "__pycache__", ".ruff_cache", ".pytest_cache"}
APPS = ("project", "social", "notifications", "delivery", "actions", "config")

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*\bsrc=\"([^\"]+)\"")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
# A document named in source: docs/<path>.md (optionally with an #anchor), or README.
NAMED_DOC = re.compile(r"\bdocs/([\w./-]+\.md)(?:#([\w-]+))?")
ISSUE_REF = re.compile(r"\bissues? #?\d+|\(issue\b", re.I)
# A section named in source: docs/<path>.md "Heading" or README "Heading" (a heading's start).
NAMED_SECTION = re.compile(r"\b(docs/[\w./-]+\.md|README(?:\.md)?) \"([^\"]+)\"")


def _source_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        found.append(path)
    return sorted(found)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(text):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _headings(path: Path) -> list[str]:
    return HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8")))


def _links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = CODE_SPAN.sub("", text)
    return LINK.findall(text) + [markdown or html for markdown, html in IMAGE.findall(text)]


def _section(path: Path, heading: str) -> str:
    """The text under `heading` (any level) up to the next heading of its level or above."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    match = re.search(rf"^(#{{1,6}}) +{re.escape(heading)} *$", text, re.M)
    assert match, f"{path.relative_to(ROOT)} has no heading {heading!r}"
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def _first_cells(text: str) -> list[str]:
    """The first cell of every body row of every table in `text` (header and rule rows left out)."""
    cells = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[\s:|-]+\|$", line):
            if previous.startswith("|"):  # the header row has no table row above it
                cells.append(line.split("|")[1])
        previous = line if line.startswith("|") else ""
    return cells


def _spans(cell: str) -> list[str]:
    return [span.strip("`") for span in CODE_SPAN.findall(cell)]


def _both_ways(code: set[str], documented: set[str], what: str, where: str) -> None:
    missing, unknown = sorted(code - documented), sorted(documented - code)
    assert not missing and not unknown, (
        f"{where} and the code disagree on {what}: missing from the docs {missing}, in the docs but not "
        f"in the code {unknown}"
    )


def test_the_documents_exist():
    for name in [
        "README.md",
        "tutorial/first-run.md",
        "how-to/run-locally.md",
        "how-to/deploy-on-aws.md",
        "how-to/run-in-production.md",
        "how-to/operate.md",
        "how-to/run-benchmarks.md",
        "reference/settings.md",
        "reference/commands.md",
        "reference/http.md",
        "reference/tables.md",
        "reference/processes.md",
        "explanation/architecture.md",
    ]:
        assert (ROOT / "docs" / name).is_file(), name


def test_the_index_lists_every_document():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {(ROOT / "docs" / target.partition("#")[0]).resolve() for target in LINK.findall(index)}
    documents = [p for p in DOCS if p.parent != ROOT and p.name != "README.md"]
    unlisted = [str(p.relative_to(ROOT)) for p in documents if p not in listed]
    assert not unlisted, f"docs/README.md does not link to {unlisted}"


def test_the_architecture_has_one_diagram():
    diagrams = [p for p in DOCS if "```mermaid" in p.read_text(encoding="utf-8")]
    assert [p.relative_to(ROOT) for p in diagrams] == [Path("docs/explanation/architecture.md")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_and_headings_that_exist(doc):
    broken = []
    for target in _links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT)}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_document_the_source_names_exists():
    missing = []
    for path in _source_files():
        if ROOT / "docs" in path.parents or path in (ROOT / "README.md", Path(__file__).resolve()):
            continue  # the documents' own links are checked above
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{lineno}"
            for name, anchor in NAMED_DOC.findall(line):
                dest = ROOT / "docs" / name
                if not dest.is_file():
                    missing.append(f"{where}: docs/{name}")
                elif anchor and anchor not in _anchors(dest):
                    missing.append(f"{where}: docs/{name}#{anchor}")
            for name, section in NAMED_SECTION.findall(line):
                dest = ROOT / ("README.md" if name.startswith("README") else name)
                if not dest.is_file():
                    missing.append(f"{where}: {name}")
                elif not any(h.startswith(section) for h in _headings(dest)):
                    missing.append(f'{where}: no section "{section}" in {name}')
            if re.search(r"\bDESIGN\.md\b|\bseeds/", line):
                missing.append(f"{where}: a design document or seed file outside the repository")
    assert not missing, "\n".join(missing)


def test_no_issue_numbers_in_code_tests_or_docs():
    found = []
    for path in _source_files():
        if path == Path(__file__).resolve():
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE_REF.search(line):
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not found, "say today's reason instead of an issue number:\n" + "\n".join(found)


# A path of the repository named in a document: `social/live.py`, `tests/notifications/test_feed*.py`.
TOP_FOLDERS = "actions|config|project|social|notifications|delivery|tests|bench|deploy|scripts"
REPO_PATH = re.compile(rf"(?<![\w/.-])((?:{TOP_FOLDERS})/[\w./*@-]*)")
# A module, class or function named by its dotted path: `project.dynamo.transactions.write_retrying`.
DOTTED = re.compile(r"((?:actions|config|project|social|notifications|delivery)(?:\.\w+)+)(?:\(.*\))?")


def _named_object_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        for name in parts[end:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_and_module_a_document_names_exists(doc):
    """Paths and dotted names in code spans are today's layout (config/, project/<concern>/)."""
    missing = []
    for span in _spans(doc.read_text(encoding="utf-8")):
        for path in REPO_PATH.findall(span):
            path = path.rstrip(".")
            found = list(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()
            if not found:
                missing.append(path)
        dotted = DOTTED.fullmatch(span)
        if dotted and not re.search(r"\.(py|com)$", dotted.group(1)) and not _named_object_exists(dotted.group(1)):
            missing.append(span)
    assert not missing, f"{doc.relative_to(ROOT)} names what the repository does not have: {missing}"


def test_the_readme_stays_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 160, f"README.md has {lines} lines: move detail into docs/"


# --- The reference lists are the code's ------------------------------------------------------


def test_the_commands_reference_lists_every_management_command_of_the_project():
    code = {name for name, app in get_commands().items() if app.split(".")[0] in APPS}
    documented = set()
    for cell in _first_cells(_section(REFERENCE / "commands.md", "Commands of the project")):
        documented.update(re.findall(r"manage\.py (\w+)", " ".join(_spans(cell))))
    _both_ways(code, documented, "the management commands", "docs/reference/commands.md")


def _environment_reads(path: Path) -> tuple[set[str], set[str]]:
    """The names `path` reads with django-environ (`env.int("NAME", ...)`, `env.db("NAME")`...),
    and the f-string templates it reads (`LIMIT_{}`), each as a format string."""
    names, templates = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        reader = func.value if isinstance(func, ast.Attribute) else func
        if not (isinstance(reader, ast.Name) and reader.id == "env"):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
        elif isinstance(first, ast.JoinedStr):
            templates.add("".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in first.values))
    return names, templates


def _settings_read_by_the_code() -> set[str]:
    names = set()
    for path in (ROOT / "config" / "settings.py", ROOT / "config" / "gunicorn.py"):
        found, templates = _environment_reads(path)
        names |= found
        assert templates <= {"LIMIT_{}", "LIMIT_{}_NEW"}, f"{path}: read from the environment as {templates}"
        for template in templates:  # the write limits: one pair of settings per limit
            names |= {template.format(limit.upper()) for limit in settings.RATE_LIMITS}
    return names


def test_the_settings_reference_lists_every_setting_read_from_the_environment():
    documented = set()
    for cell in _first_cells((REFERENCE / "settings.md").read_text(encoding="utf-8")):
        documented.update(span for span in _spans(cell) if re.fullmatch(r"[A-Z][A-Z0-9_]+", span))
    code = _settings_read_by_the_code()
    # What the start-up scripts read (not Django's settings) may be listed too.
    scripts = " ".join((ROOT / path).read_text(encoding="utf-8") for path in ("scripts/run.sh", "deploy/entrypoint.sh"))
    code |= {name for name in documented if re.search(rf"\${{?{name}\b", scripts)}
    _both_ways(code, documented, "the settings", "docs/reference/settings.md")


def _literal_defaults() -> dict[str, object]:
    """The settings whose default the code writes as a literal (`env.int("X", default=8)`)."""
    defaults: dict[str, object] = {}
    for path in (ROOT / "config" / "settings.py", ROOT / "config" / "gunicorn.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            reader = node.func.value if isinstance(node.func, ast.Attribute) else node.func
            if not (isinstance(reader, ast.Name) and reader.id == "env"):
                continue
            for keyword in node.keywords:
                if keyword.arg == "default" and isinstance(keyword.value, ast.Constant):
                    defaults[str(node.args[0].value)] = keyword.value.value
    return defaults


def _same_default(code: object, documented: str) -> bool:
    if isinstance(code, bool):
        return documented.lower() == str(code).lower()
    if isinstance(code, int | float):
        try:
            return float(documented) == float(code)
        except ValueError:
            return False
    return documented == code


def test_the_settings_reference_gives_each_literal_default_as_the_code_has_it():
    defaults, wrong = _literal_defaults(), []
    for line in (REFERENCE / "settings.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        names = [span for span in _spans(cells[0]) if re.fullmatch(r"[A-Z][A-Z0-9_]+", span)]
        values = _spans(cells[1])
        if len(values) != len(names):
            continue  # a default said in words (`CPU count, at least 2`), or one value for a pair
        for name, value in zip(names, values, strict=True):
            if name in defaults and not _same_default(defaults[name], value):
                wrong.append(f"{name}: the code's default is {defaults[name]!r}, the docs say {value!r}")
    assert not wrong, "docs/reference/settings.md: " + "; ".join(wrong)


def _routes(patterns, prefix: str = "") -> set[str]:
    """Every URL of the site as `/path/<name>/`, the admin site as `/admin/`."""
    found = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if getattr(pattern, "app_name", None) == "admin":
                found.add("/" + route)
                continue
            found |= _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            found.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"<\1>", route))
    return found


def test_the_http_reference_lists_every_url_of_the_site():
    documented = set()
    for cell in _first_cells(_section(REFERENCE / "http.md", "Endpoints")):
        for span in _spans(cell):
            documented.update(re.findall(r"(?:^|\s)(/[^\s?]*)", span))
    code = _routes(get_resolver().url_patterns) | set(HEALTH_PATHS)
    _both_ways(code, documented, "the URLs", 'docs/reference/http.md "Endpoints"')


def test_the_tables_reference_lists_every_dynamodb_table():
    documented = set()
    for cell in _first_cells((REFERENCE / "tables.md").read_text(encoding="utf-8")):
        documented.update(_spans(cell)[:1])
    code = {model.Meta.logical_name for model in registered_models()}
    # The activity log's monthly tables are made by `activity_tables`, not from a model's Meta.
    _both_ways(code | {"activity_YYYYMM"}, documented, "the DynamoDB tables", "docs/reference/tables.md")


def test_the_metrics_reference_lists_every_metric():
    source = (ROOT / "project" / "operations" / "metrics.py").read_text(encoding="utf-8")
    code = {f"{name}_total" for name in re.findall(r"\bCounter\(\s*\"(\w+)\"", source)}
    code |= set(re.findall(r"\b(?:Histogram|Gauge|GaugeMetricFamily|CounterMetricFamily)\(\s*\"(\w+)\"", source))
    documented = set()
    for cell in _first_cells(_section(REFERENCE / "metrics.md", "Metric names")):
        documented.update(_spans(cell)[:1])
    assert code, "no metric found in project/operations/metrics.py"
    _both_ways(code, documented, "the metrics", "docs/reference/metrics.md")


def test_the_processes_reference_lists_every_supervisord_program():
    config = configparser.RawConfigParser()
    config.read(ROOT / "deploy" / "supervisord.conf")
    code = {section.removeprefix("program:") for section in config.sections() if section.startswith("program:")}
    documented = set()
    for cell in _first_cells(_section(REFERENCE / "processes.md", "Programs")):
        documented.update(_spans(cell)[:1])
    _both_ways(code, documented, "the programs", "docs/reference/processes.md")
