"""What each app keeps about a person, for the account's deletion and its export.

Every app that stores something keyed by a person registers, in its own `erasure.py` module
(found by `autodiscover_modules`, as the admin finds `admin.py`):

- **eraser steps** (`@erasure_step(name=..., order=...)`): a function
  `step(*, user_id, cursor) -> str | None` that removes one bounded unit of the person's items
  (a page) and returns the cursor to resume from, or None once nothing is left. The deletion
  worker (`social.account.services`) runs the steps in their fixed `order`, stores the step's
  name and cursor after each unit, and after a crash calls the step again with the stored
  cursor. So a step must be **idempotent**: called again with a cursor it already went past
  (the process died before the cursor was stored), it changes nothing twice (every write is a
  delete or a conditional write).
- **export sections** (`@export_section(name=..., order=...)`): a generator
  `section(*, user_id) -> Iterator[dict]` of JSON-ready objects, reading page by page, so an
  export streams whatever the person's volume (`social.account.selectors`).

A new table keyed by person adds its step and its section next to its model; nothing else
changes. The order of steps matters where one writes what another removes (the likes step's
unlikes write the activity lines the activity step removes after it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.utils.module_loading import autodiscover_modules

StepFunction = Callable[..., "str | None"]
SectionFunction = Callable[..., Iterator[dict[str, Any]]]


@dataclass(frozen=True)
class ErasureStep:
    name: str
    order: int
    run: StepFunction


@dataclass(frozen=True)
class ExportSection:
    name: str
    order: int
    read: SectionFunction
    single: bool  # one object (the profile), not a list


_steps: dict[str, ErasureStep] = {}
_sections: dict[str, ExportSection] = {}
_discovered = False


def erasure_step(*, name: str, order: int) -> Callable[[StepFunction], StepFunction]:
    """Register an eraser step (see the module's docstring). Names are unique and stored."""

    def register(run: StepFunction) -> StepFunction:
        known = _steps.get(name)
        if known is not None and known.run is not run and known.run.__qualname__ != run.__qualname__:
            raise ValueError(f"two eraser steps named {name!r}")
        _steps[name] = ErasureStep(name=name, order=order, run=run)
        return run

    return register


def export_section(*, name: str, order: int, single: bool = False) -> Callable[[SectionFunction], SectionFunction]:
    """Register an export section (see the module's docstring)."""

    def register(read: SectionFunction) -> SectionFunction:
        _sections[name] = ExportSection(name=name, order=order, read=read, single=single)
        return read

    return register


# `actions` composes the apps and is no Django app itself, so autodiscovery does not see it:
# its module is named here (the likes step undoes likes through the like's own action).
COMPOSED_MODULES = ("actions.erasure",)


def _discover() -> None:
    global _discovered
    if not _discovered:
        autodiscover_modules("erasure")
        for module in COMPOSED_MODULES:
            import_module(module)
        _discovered = True


def erasure_steps() -> list[ErasureStep]:
    """Every registered step, in its fixed order."""
    _discover()
    return sorted(_steps.values(), key=lambda step: (step.order, step.name))


def export_sections() -> list[ExportSection]:
    """Every registered section, in its fixed order."""
    _discover()
    return sorted(_sections.values(), key=lambda section: (section.order, section.name))
