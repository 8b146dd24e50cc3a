"""Serializers every app's API shares (so no app imports another's `apis`)."""

from __future__ import annotations

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 rather than silently ignored."""

    rejects_unknown_fields = True  # the schema says so too (project.schema)

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in sorted(unknown)})
        return attrs


def page_query_serializer(*, size_max: int, name: str = "PageQuerySerializer") -> type[serializers.Serializer]:
    """The `?cursor=&limit=` query of a paged list, `limit` at most `size_max`."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "cursor": serializers.CharField(required=False, max_length=2000),
            "limit": serializers.IntegerField(required=False, min_value=1, max_value=size_max),
        },
    )
