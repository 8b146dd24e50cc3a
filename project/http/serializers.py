"""Serializers every app's API shares (so no app imports another's `apis`)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

BLANK = "This field may not be blank."


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
