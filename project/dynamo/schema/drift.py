"""What a model declares (keys, indexes, TTL) against what a live table has: the drift
`create_tables --check` reports.

`Model._get_schema()` and `_ttl_attribute()` are PynamoDB's private (pinned 6.1.0): the
same declarations `Model.create_table` sends, which PynamoDB has no public reader of;
comparing against them is how drift is found.
"""

from __future__ import annotations

from typing import Any, cast

from pynamodb.models import Model


def declared_indexes(model: type[Model]) -> dict[str, dict[str, Any]]:
    """Each index `model` declares, by name: its kind (GSI, LSI), keys and projection."""
    schema = cast(dict[str, Any], model._get_schema())  # read by a key held in a variable
    declared = {}
    for kind, key in (("GSI", "global_secondary_indexes"), ("LSI", "local_secondary_indexes")):
        for index in schema[key]:
            declared[index["index_name"]] = {
                "kind": kind,
                "keys": sorted((k["KeyType"], k["AttributeName"]) for k in index["key_schema"]),
                "projection": _projection(index["projection"]),
            }
    return declared


def _projection(projection: dict[str, Any]) -> str:
    """`ALL`, `KEYS_ONLY`, or `INCLUDE [a, b]`: what an index carries, comparable."""
    included = projection.get("NonKeyAttributes")
    return f"{projection['ProjectionType']} {sorted(included)}" if included else projection["ProjectionType"]


def ttl_attribute_name(model: type[Model]) -> str | None:
    ttl = model._ttl_attribute()
    return ttl.attr_name if ttl else None


def ttl_enabled(ttl_description: dict[str, Any], attribute: str) -> bool:
    """Whether DescribeTimeToLive's `TimeToLiveDescription` has TTL on (or being switched on) for `attribute`."""
    return (
        ttl_description.get("TimeToLiveStatus") in ("ENABLED", "ENABLING")
        and ttl_description.get("AttributeName") == attribute
    )


def table_drift(model: type[Model], description: dict[str, Any], ttl_description: dict[str, Any] | None) -> list[str]:
    """Differences between what `model` declares and the live table `description`."""
    drift = []
    schema = model._get_schema()
    declared_keys = sorted((k["KeyType"], k["AttributeName"]) for k in schema["key_schema"])
    live_keys = sorted((k["KeyType"], k["AttributeName"]) for k in description["KeySchema"])
    if declared_keys != live_keys:
        drift.append(f"primary key is {live_keys}, model declares {declared_keys} (recreate the table)")
    live: dict[str, dict[str, Any]] = {}
    for kind, key in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes")):
        for index in description.get(key, []):
            live[index["IndexName"]] = {
                "kind": kind,
                "keys": sorted((k["KeyType"], k["AttributeName"]) for k in index["KeySchema"]),
                "projection": _projection(index["Projection"]),
            }
    declared = declared_indexes(model)
    for name, want in declared.items():
        have = live.get(name)
        if have is None:
            if want["kind"] == "LSI":
                drift.append(
                    f"LSI {name} is missing: a local secondary index can only be created with the "
                    "table, so the table must be recreated (export, drop, create_tables, import)"
                )
            else:
                drift.append(f"GSI {name} is missing")
        elif have != want:
            drift.append(f"{want['kind']} {name} is {have}, model declares {want}")
    for name in sorted(set(live) - set(declared)):
        drift.append(
            f"{live[name]['kind']} {name} exists but no model declares it (it still costs a write whenever "
            "an item it carries changes; `create_tables --drop-undeclared` removes a GSI)"
        )
    ttl_name = ttl_attribute_name(model)
    if ttl_name and not ttl_enabled((ttl_description or {}).get("TimeToLiveDescription", {}), ttl_name):
        drift.append(f"TTL on {ttl_name} is not enabled")
    return drift


def index_problems(model: type[Model], description: dict[str, Any]) -> list[str]:
    """Each index `model` declares that the live table `description` lacks or is still building."""
    live = {index["IndexName"]: "ACTIVE" for index in description.get("LocalSecondaryIndexes", [])}
    for index in description.get("GlobalSecondaryIndexes", []):
        live[index["IndexName"]] = index.get("IndexStatus", "ACTIVE")
    problems = []
    for name in declared_indexes(model):
        if name not in live:
            problems.append(f"index {name} missing")
        elif live[name] != "ACTIVE":
            problems.append(f"index {name} {live[name]}")
    return problems
