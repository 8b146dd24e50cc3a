"""OpenAPI naming for the one-APIView-per-operation style.

Every API class nests its own `InputSerializer` / `OutputSerializer`; by default
drf-spectacular would name all of them "Input"/"Output" and merge them. Components
are named after the API class instead (`CommentLikeApi.OutputSerializer` ->
`CommentLikeOutput`), and operation ids after the API class and method.
"""

import re

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    def get_serializer_name(self, serializer, direction):
        owner, _, name = type(serializer).__qualname__.rpartition(".")
        if owner:
            return owner.removesuffix("Api") + name
        return super().get_serializer_name(serializer, direction)

    def get_operation_id(self):
        view_name = type(self.view).__name__.removesuffix("Api")
        words = re.sub(r"(?<!^)(?=[A-Z])", "_", view_name).lower()
        return f"{words}_{self.method.lower()}"
