"""OpenAPI naming for the one-APIView-per-operation style.

Every API class nests its own `InputSerializer` / `OutputSerializer`; by default
drf-spectacular would name all of them "Input"/"Output" and merge them. Components
are named after the API class instead (`CommentLikeApi.OutputSerializer` ->
`CommentLikeOutput`), and operation ids after the API class and method.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.permissions import AllowAny

if TYPE_CHECKING:
    from drf_spectacular.utils import Direction


class ErrorSerializer(serializers.Serializer[Any]):
    """Every error answer (project/errors.py); a 400 also names each field at fault."""

    detail = serializers.CharField()
    code = serializers.CharField()


ERROR_ANSWERS = {
    "400": "Bad input: `detail`, and a list of messages under each field at fault "
    "(a forged or expired `cursor`: code `invalid_cursor`).",
    "401": "No or invalid credentials.",
    "403": "Signed in but not allowed.",
    "404": "No such object.",
    "408": "The body did not arrive within the server's deadline (`body_timeout`); the connection is closed.",
    "409": "Concurrent writers kept winning (or a request with the same Idempotency-Key is still "
    "running); nothing was changed, retry.",
    "413": "The body is larger than the server accepts (`too_large`).",
    "415": "Unsupported Content-Type.",
    "422": "This Idempotency-Key was used with another request (`idempotency_key_reused`).",
    "429": "Throttled; retry after the Retry-After header.",
    "503": "The server is busy (`overloaded`) or the data store is unavailable; retry after the Retry-After header.",
}


def page_parameters(*, size_max: int, size_default: int) -> list[OpenApiParameter]:
    """`cursor` and `limit` of a paged list, with the bounds the server enforces."""
    return [
        OpenApiParameter(
            "cursor",
            {"type": "string", "maxLength": 2000},
            description="The `next` value of the previous page (signed; a forged or expired one is a 400).",
        ),
        OpenApiParameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": size_max},
            description=f"Page size, 1..{size_max} (default {size_default}).",
        ),
    ]


# `_map_serializer` and `_get_response_bodies` are drf-spectacular's private hooks (pinned
# in requirements.txt): its public extension points (OpenApiSerializerExtension,
# @extend_schema) work per serializer or per view, and these two rules hold for every
# request body and every operation, so one override beats an annotation on each API.
class AutoSchema(SpectacularAutoSchema):
    def _map_serializer(self, serializer: Any, direction: Direction, bypass_extensions: bool = False) -> Any:
        """Request bodies say what the server enforces beyond the fields' own rules.

        A serializer with `rejects_unknown_fields` (project.http.serializers.StrictSerializer) gets
        `additionalProperties: false`; `schema_extra` (e.g. "comment_ids or entry_ids")
        is merged in as is.
        """
        # drf-spectacular leaves its private hooks unannotated.
        schema = super()._map_serializer(serializer, direction, bypass_extensions)  # type: ignore[no-untyped-call]
        if direction == "request" and schema.get("type") == "object":
            if getattr(serializer, "rejects_unknown_fields", False):
                schema["additionalProperties"] = False
            schema.update(getattr(serializer, "schema_extra", {}))
        return schema

    def get_serializer_name(self, serializer: serializers.Serializer[Any], direction: Direction) -> str:
        owner, _, name = type(serializer).__qualname__.rpartition(".")
        if owner:
            return owner.removesuffix("Api") + name
        return super().get_serializer_name(serializer, direction)

    def _get_response_bodies(self, direction: Direction = "response") -> Any:
        """The success answers, plus the error answers every operation can give."""
        responses = super()._get_response_bodies(direction)
        public = any(isinstance(permission, AllowAny) for permission in self.view.get_permissions())
        for code, description in ERROR_ANSWERS.items():
            if code in responses or (public and code in ("401", "403")):
                continue
            if code == "404" and "{" not in self.path:
                continue
            if code in ("408", "413", "415") and self.method not in ("POST", "PUT", "PATCH"):
                continue
            handler = getattr(self.view, self.method.lower(), None)
            if code == "422" and not getattr(handler, "takes_idempotency_key", False):
                continue
            answer = self._get_response_for_code(  # type: ignore[no-untyped-call]  # unannotated, as above
                ErrorSerializer, code, direction=direction
            )
            responses[code] = {**answer, "description": description}
        return responses

    def get_operation_id(self) -> str:
        view_name = type(self.view).__name__.removesuffix("Api")
        words = re.sub(r"(?<!^)(?=[A-Z])", "_", view_name).lower()
        return f"{words}_{self.method.lower()}"
