"""The API's JSON parser: a nesting limit, and never a RecursionError (project.http.guard)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO


def json_depth_exceeds(value: object, limit: int) -> bool:
    """Whether `value` nests lists/objects deeper than `limit` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class SafeJSONParser(JSONParser):
    """DRF's JSON parser with a nesting limit (JSON_MAX_DEPTH) that never raises RecursionError."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON nested deeper than {settings.JSON_MAX_DEPTH} levels.") from None
        if json_depth_exceeds(data, settings.JSON_MAX_DEPTH):
            raise ParseError(f"JSON nested deeper than {settings.JSON_MAX_DEPTH} levels.")
        return data
