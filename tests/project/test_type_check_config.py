"""The type check's strict section (pyproject.toml) reaches every services and selectors module,
and every write module the app graph finds (tests/project/test_app_graph.py: a module below
the edge that imports a write module writes too).

Its module patterns follow names, not a list of files: a module that holds writes or reads
under another name (`feed_selectors.py`) would escape them, and this test names it.
"""

import tomllib
from pathlib import Path

from tests.project.test_app_graph import _edge, _graph, _writes

ROOT = Path(__file__).resolve().parents[2]
APPS = ("actions", "project", "social", "notifications", "delivery")
STRICT_KINDS = ("services", "selectors")


def _strict_patterns() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [strict] = [override for override in config["tool"]["mypy"]["overrides"] if override.get("disallow_untyped_defs")]
    return strict["module"]


def _matches(pattern: list[str], module: list[str]) -> bool:
    """mypy's rule: a `*` component stands for zero or more components."""
    if not pattern:
        return not module
    if pattern[0] == "*":
        return any(_matches(pattern[1:], module[index:]) for index in range(len(module) + 1))
    return bool(module) and pattern[0] == module[0] and _matches(pattern[1:], module[1:])


def _is_strict(module: str, patterns: list[str]) -> bool:
    return any(_matches(pattern.split("."), module.split(".")) for pattern in patterns)


def test_the_pattern_rule_is_mypys():
    assert _is_strict("social.activity.services", ["*.services"])
    assert _is_strict("delivery.selectors", ["*.selectors"])
    assert _is_strict("project", ["project.*"])
    assert not _is_strict("notifications.feed_selectors", ["*.selectors"])


def test_every_services_and_selectors_module_is_checked_strictly():
    patterns = _strict_patterns()
    modules = [
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
    ]
    writes_and_reads = [module for module in modules if any(kind in module for kind in STRICT_KINDS)]
    assert writes_and_reads, "no services or selectors module found"
    assert [module for module in writes_and_reads if not _is_strict(module, patterns)] == []
    assert all(_is_strict(module, patterns) for module in modules if module.split(".")[0] in ("actions", "project"))


def test_every_write_module_is_checked_strictly():
    patterns = _strict_patterns()
    writes = [module for module in _writes(_graph()) if not _edge(module)]
    assert "notifications.like_fold" in writes
    assert sorted(module for module in writes if not _is_strict(module, patterns)) == []
