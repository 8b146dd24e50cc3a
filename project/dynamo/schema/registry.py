"""The registry of the project's PynamoDB models: every model declared in an installed app's
`models` module with `Meta = table_meta("<logical name>")` (project/dynamo/clients.py), so a
new table is created by `create_tables` as soon as its model exists in an installed app."""

from __future__ import annotations

import inspect
from typing import Protocol, cast

from pynamodb.models import MetaProtocol, Model


class TableMeta(MetaProtocol, Protocol):
    """What `table_meta` makes: PynamoDB's `Meta`, plus the table's name without the prefix."""

    logical_name: str


def registered_models() -> list[type[Model]]:
    """Every PynamoDB model declared in an installed app's `models` module, by logical name.

    Django imported those modules when it loaded the apps (`AppConfig.models_module`);
    only classes defined there with a `table_meta` Meta count, not ones imported into it.
    """
    from django.apps import apps

    found: dict[str, type[Model]] = {}
    for config in apps.get_app_configs():
        module = config.models_module
        if module is None:
            continue
        for _, candidate in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(candidate, Model)
                and candidate is not Model
                and candidate.__module__ == module.__name__
                and hasattr(candidate.Meta, "logical_name")
            ):
                found[cast(TableMeta, candidate.Meta).logical_name] = candidate
    return [found[name] for name in sorted(found)]
