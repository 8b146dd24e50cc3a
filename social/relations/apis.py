"""API: block and mute people (`PUT`/`DELETE /api/users/<username>/block/` and `/mute/`) and
one's own list (`GET /api/me/relations/`). Edge module: it calls actions.relations."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from actions.relations import RelationChange, relation_change
from social.relations.selectors import BLOCK, MUTE, relations_people


class RelationStateSerializer(serializers.Serializer):
    username = serializers.CharField()
    blocked = serializers.BooleanField()
    muted = serializers.BooleanField()


def _answer(change: RelationChange) -> Response:
    state = change.state
    return Response({"username": change.username, "blocked": state.blocked, "muted": state.muted})


class _RelationApi(APIView):
    """PUT turns the relation `kind` on, DELETE off (each subclass says what it does)."""

    kind = ""
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: RelationStateSerializer})
    def put(self, request, username: str):
        return self._change(request, username, on=True)

    @extend_schema(request=None, responses={200: RelationStateSerializer})
    def delete(self, request, username: str):
        return self._change(request, username, on=False)

    def _change(self, request, username: str, *, on: bool) -> Response:
        return _answer(relation_change(owner_id=str(request.user.pk), username=username, kind=self.kind, on=on))


class UserBlockApi(_RelationApi):
    """Block (PUT) or unblock (DELETE) a person. While blocked they cannot reply to your comments
    (403), their mentions of you notify nobody, and their likes, replies and mentions never reach
    your inbox or e-mail (counts still count); what they already put in your unread inbox is
    taken out. A block also hides them as a mute does. Both idempotent. 404 for an unknown person,
    400 for yourself."""

    kind = BLOCK


class UserMuteApi(_RelationApi):
    """Mute (PUT) or unmute (DELETE) a person: their comments leave your timeline and their likes,
    replies and mentions your inbox and e-mail; they are not told and nothing changes for them.
    Both idempotent. 404 for an unknown person, 400 for yourself."""

    kind = MUTE


class RelationListSerializer(serializers.Serializer):
    results = RelationStateSerializer(many=True)


class MyRelationsApi(APIView):
    """The people you blocked or muted, by username."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: RelationListSerializer})
    def get(self, request):
        people = relations_people(user_id=str(request.user.pk))
        return Response(
            {
                "results": [
                    {"username": person.username, "blocked": person.blocked, "muted": person.muted} for person in people
                ]
            }
        )
