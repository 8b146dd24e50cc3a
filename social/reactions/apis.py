"""The reactions API (docs/reference/http.md): PUT and DELETE /api/comments/<id>/reactions/<name>/."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from actions.reactions import reaction_add, reaction_remove
from project.http.fresh import FRESH_LIKES
from social.reactions.names import NAMES
from social.reactions.selectors import Reactions

NAME_PARAMETER = OpenApiParameter("name", str, OpenApiParameter.PATH, enum=list(NAMES), description="The reaction.")


class CommentReactionApi(APIView):
    """Add (PUT) or take back (DELETE) one's reaction `name` on a comment; both idempotent.

    400 on `name` for a name not among the six, 404 for an unknown (or hidden, deleted) comment.
    """

    class OutputSerializer(serializers.Serializer):
        reactions = serializers.DictField(
            child=serializers.IntegerField(), source="counts", help_text="Count per reaction name, only those above 0."
        )
        my_reactions = serializers.ListField(
            child=serializers.CharField(), source="mine", help_text="The caller's own reactions."
        )

    @extend_schema(request=None, parameters=[NAME_PARAMETER], responses={200: OutputSerializer})
    def put(self, request, comment_id: str, name: str):
        state = reaction_add(comment_id=comment_id, user_id=str(request.user.pk), name=name)
        return self._answer(request, comment_id, state)

    @extend_schema(request=None, parameters=[NAME_PARAMETER], responses={200: OutputSerializer})
    def delete(self, request, comment_id: str, name: str):
        state = reaction_remove(comment_id=comment_id, user_id=str(request.user.pk), name=name)
        return self._answer(request, comment_id, state)

    def _answer(self, request, comment_id: str, state: Reactions) -> Response:
        response = Response(self.OutputSerializer(state).data)
        FRESH_LIKES.remember(request, response, value=comment_id)  # the next page shows these counts exactly
        return response
