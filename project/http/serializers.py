"""Serializers every app's API shares (so no app imports another's `apis`)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy
from rest_framework import serializers

if TYPE_CHECKING:
    from rest_framework.request import Request

BLANK = gettext_lazy("This field may not be blank.")


class NoBlankSerializer(serializers.Serializer[Any]):
    """Rejects a blank value (`?kind=`, a form's `parent_id=`) for a field that does not allow
    one: DRF reads a blank form or query value as "not given" (or null), so it would use the
    default instead of saying the value is wrong."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "getlist"):  # a QueryDict: query parameters or a form body
            blank = [
                name
                for name, field in self.fields.items()
                if not field.read_only
                and not getattr(field, "allow_blank", False)
                and any(value.strip() == "" for value in data.getlist(name))
            ]
            if blank:
                raise serializers.ValidationError({name: [BLANK] for name in blank})
        return super().to_internal_value(data)


class StrictSerializer(NoBlankSerializer):
    """Rejects fields it does not know, so a typo is a 400 rather than silently ignored,
    and blank values of fields that do not allow them."""

    rejects_unknown_fields = True  # the schema says so too (project.http.schema)

    def validate(self, attrs: Any) -> Any:
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in sorted(unknown)})
        return attrs


def page_query_serializer(*, size_max: int, name: str = "PageQuerySerializer") -> type[serializers.Serializer[Any]]:
    """The `?cursor=&limit=` query of a paged list, `limit` at most `size_max`."""
    return type(
        name,
        (NoBlankSerializer,),
        {
            # Blank: the first page (a client may always send `cursor=`).
            "cursor": serializers.CharField(required=False, allow_blank=True, max_length=2000),
            "limit": serializers.IntegerField(required=False, min_value=1, max_value=size_max),
        },
    )


class QueriesValidated:
    """The validated query of a GET that clients repeat verbatim (the live poll: every open page
    asks the same query string every few seconds), kept by this process for the last `kept`
    query strings it accepted.

    Only for a serializer whose answer is a function of the query string alone (no context,
    nothing read): a kept answer then cannot go stale. A refused query raises as the
    serializer does, and is not kept.
    """

    def __init__(self, serializer_class: type[serializers.Serializer[Any]], *, kept: int) -> None:
        self.serializer_class = serializer_class
        self.kept = kept
        self._lock = threading.Lock()
        self._validated: dict[tuple[str, str | None], dict[str, Any]] = {}

    def validated(self, request: Request) -> dict[str, Any]:
        """The serializer's validated_data for the request's query (lists copied: the caller's own)."""
        key = (request.META.get("QUERY_STRING", ""), request.encoding)
        with self._lock:
            validated = self._validated.get(key)
        if validated is None:
            serializer = self.serializer_class(data=request.query_params)
            serializer.is_valid(raise_exception=True)
            validated = dict(serializer.validated_data)
            with self._lock:
                if len(self._validated) >= self.kept:
                    del self._validated[next(iter(self._validated))]  # the oldest
                self._validated[key] = validated
        return {name: list(value) if isinstance(value, list) else value for name, value in validated.items()}
