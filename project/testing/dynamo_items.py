"""DynamoDB items as botocore carries them, for the read lag model (aws_read_lag.py): a table's
keys and indexes (from DescribeTable), an item's identity, a Query's key condition evaluated on
an item, and a request's projection.

Only what the model needs: key attributes of type S, N or B; key conditions of `=`, `<`, `<=`,
`>`, `>=`, `BETWEEN` and `begins_with` joined by AND (what PynamoDB writes for a Query);
projections of top-level attributes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from botocore.client import BaseClient

Image = dict[str, Any]  # an item as botocore carries it: {"name": {"S": "..."}, ...}
Answer = dict[str, Any]
Call = Callable[[BaseClient, str, dict[str, Any]], Answer]


@dataclass(frozen=True)
class Keys:
    hash: str
    range: str | None

    @property
    def names(self) -> list[str]:
        return [self.hash] if self.range is None else [self.hash, self.range]


@dataclass(frozen=True)
class Index:
    keys: Keys
    projection: str  # ALL, KEYS_ONLY, INCLUDE
    include: frozenset[str]
    is_global: bool


@dataclass(frozen=True)
class Table:
    keys: Keys
    indexes: dict[str, Index]


_schemas: dict[str, Table] = {}  # by physical table name; tables keep their keys for the run


def _keys(schema: list[dict[str, str]]) -> Keys:
    by_type = {element["KeyType"]: element["AttributeName"] for element in schema}
    return Keys(by_type["HASH"], by_type.get("RANGE"))


def table_schema(real: Call, client: BaseClient, table: str) -> Table:
    if table not in _schemas:
        described = real(client, "DescribeTable", {"TableName": table})["Table"]
        indexes = {}
        for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            for index in described.get(kind, []):
                projection = index["Projection"]
                indexes[index["IndexName"]] = Index(
                    _keys(index["KeySchema"]),
                    projection["ProjectionType"],
                    frozenset(projection.get("NonKeyAttributes", [])),
                    kind == "GlobalSecondaryIndexes",
                )
        _schemas[table] = Table(_keys(described["KeySchema"]), indexes)
    return _schemas[table]


def item_identity(table: str, key: Image) -> str:
    return json.dumps([table, key], sort_keys=True, default=repr)


# --- values and expressions ----------------------------------------------------


def typed(value: dict[str, Any]) -> Any:
    """A key attribute's value in DynamoDB's order: strings and binaries by bytes, numbers by value."""
    ((kind, raw),) = value.items()
    if kind == "N":
        return Decimal(raw)
    if kind in ("S", "B"):
        return raw
    raise NotImplementedError(f"key attribute of type {kind}")


_TOKENS = re.compile(r"\s*(<=|>=|<>|[=<>(),]|[#:]?[A-Za-z0-9_.\-]+)")

# One predicate of a key condition: (attribute, operator, operands), ANDed together.
Predicate = tuple[str, str, tuple[dict[str, Any], ...]]


def key_condition(expression: str, names: dict[str, str], values: dict[str, Any]) -> list[Predicate]:
    """A Query's KeyConditionExpression as its predicates (hash key equality, one range key test)."""
    tokens = [token for token in _TOKENS.findall(expression) if token not in ("(", ")", ",")]
    predicates: list[Predicate] = []
    position = 0
    while position < len(tokens):
        token = tokens[position]
        if token.upper() == "AND":
            position += 1
        elif token.lower() == "begins_with":
            name, prefix = tokens[position + 1 : position + 3]
            predicates.append((names.get(name, name), "begins_with", (values[prefix],)))
            position += 3
        elif tokens[position + 1].upper() == "BETWEEN":  # name BETWEEN :low AND :high
            low, high = values[tokens[position + 2]], values[tokens[position + 4]]
            predicates.append((names.get(token, token), "BETWEEN", (low, high)))
            position += 5
        else:  # name <operator> :value
            predicates.append((names.get(token, token), tokens[position + 1], (values[tokens[position + 2]],)))
            position += 3
    return predicates


def holds(predicates: list[Predicate], image: Image) -> bool:
    return all(name in image and _test(typed(image[name]), op, operands) for name, op, operands in predicates)


def _test(value: Any, operator: str, operands: tuple[dict[str, Any], ...]) -> bool:
    bounds = [typed(operand) for operand in operands]
    if operator == "BETWEEN":
        return bool(bounds[0] <= value <= bounds[1])
    if operator == "begins_with":
        return bool(value.startswith(bounds[0]))
    comparisons: dict[str, Callable[[Any, Any], bool]] = {
        "=": lambda left, right: left == right,
        "<": lambda left, right: left < right,
        "<=": lambda left, right: left <= right,
        ">": lambda left, right: left > right,
        ">=": lambda left, right: left >= right,
    }
    return comparisons[operator](value, bounds[0])


def asked_names(params: dict[str, Any]) -> set[str] | None:
    """The top-level attributes a request asks for (None: all it may see)."""
    if "AttributesToGet" in params:
        return set(params["AttributesToGet"])
    expression = params.get("ProjectionExpression")
    if not expression:
        return None
    names = params.get("ExpressionAttributeNames", {})
    paths = [path.strip() for path in expression.split(",")]
    if any("." in path or "[" in path for path in paths):
        raise NotImplementedError("the read lag model projects top-level attributes only")
    return {names.get(path, path) for path in paths}


def projected(image: Image, names: set[str] | None) -> Image:
    return dict(image) if names is None else {name: value for name, value in image.items() if name in names}


def with_keys(params: dict[str, Any], key_names: list[str]) -> dict[str, Any]:
    """`params` asking for the key attributes too (the model tells items apart by their keys)."""
    asked = asked_names(params)
    if asked is None or set(key_names) <= asked:
        return params
    if "AttributesToGet" in params:
        return {**params, "AttributesToGet": sorted(asked | set(key_names))}
    names = dict(params.get("ExpressionAttributeNames", {}))
    extra = []
    for number, name in enumerate(key_names):
        if name not in asked:
            names[f"#lag_key{number}"] = name
            extra.append(f"#lag_key{number}")
    expression = ", ".join([params["ProjectionExpression"], *extra])
    return {**params, "ProjectionExpression": expression, "ExpressionAttributeNames": names}
