"""The documentation holds together: README.md and docs/*.md link only to files and
headings that exist, every document the source names (`docs/...`, `README`) exists, and
no code, test or document speaks in issue numbers (they say today's reason instead).
"""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCE_SUFFIXES = {".py", ".md", ".html", ".js"}
SKIP_DIRS = {".venv", "node_modules", ".git", "var", "staticfiles", "__pycache__", ".ruff_cache", ".pytest_cache"}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*\bsrc=\"([^\"]+)\"")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
# A document named in source: docs/<name>.md (optionally with an #anchor), or README.
NAMED_DOC = re.compile(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+))?")
ISSUE_REF = re.compile(r"\bissues? #?\d+|\(issue\b", re.I)
# A section named in source: docs/<name>.md "Heading" or README "Heading" (a heading's start).
NAMED_SECTION = re.compile(r"\b(docs/[\w.-]+\.md|README(?:\.md)?) \"([^\"]+)\"")


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


def test_the_documents_exist():
    names = {p.name for p in DOCS}
    for name in [
        "README.md",
        "architecture.md",
        "operations.md",
        "api.md",
        "costs-and-benchmarks.md",
        "security.md",
        "using-the-site.md",
        "testing.md",
    ]:
        assert name in names


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
        if path.parent == ROOT / "docs" or path in (ROOT / "README.md", Path(__file__).resolve()):
            continue  # the documents' own links are checked above
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{lineno}"
            for name, anchor in NAMED_DOC.findall(line):
                dest = ROOT / "docs" / name
                if not dest.exists():
                    missing.append(f"{where}: docs/{name}")
                elif anchor and anchor not in _anchors(dest):
                    missing.append(f"{where}: docs/{name}#{anchor}")
            for name, section in NAMED_SECTION.findall(line):
                dest = ROOT / ("README.md" if name.startswith("README") else name)
                if not dest.exists():
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


def test_the_readme_stays_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 160, f"README.md has {lines} lines: move detail into docs/"


def test_every_setting_read_from_the_environment_is_documented():
    settings = (ROOT / "config" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r"\benv(?:\.\w+)?\(\s*\"([A-Z][A-Z0-9_]*)\"", settings))
    docs = "".join(p.read_text(encoding="utf-8") for p in DOCS)
    undocumented = sorted(name for name in names if name not in docs)
    assert names and not undocumented, f"settings missing from docs/operations.md: {undocumented}"
