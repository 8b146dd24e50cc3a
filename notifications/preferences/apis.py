"""JSON API of preferences and thread mute/watch (docs/reference/http.md "Preferences, mute and watch")."""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.preferences import selectors, services
from project.http.parsers import SafeJSONParser
from project.http.serializers import StrictSerializer


class ChannelsSerializer(StrictSerializer):
    inbox = serializers.BooleanField()
    email = serializers.BooleanField()
    push = serializers.BooleanField(help_text="Web Push to the browsers in `/api/me/push-subscriptions/`.")


class KindsSerializer(StrictSerializer):
    like = ChannelsSerializer()
    reaction = ChannelsSerializer(help_text="Reactions (👍 ❤️ 😄 🎉 😕 👀) to your comments.")
    reply = ChannelsSerializer(help_text="Replies to your comments, and replies in threads you watch.")
    mention = ChannelsSerializer()
    message = ChannelsSerializer(help_text="Staff messages: `inbox` is always true (false is a 400).")


class PreferencesSerializer(StrictSerializer):
    kinds = KindsSerializer()
    digest = serializers.ChoiceField(choices=list(selectors.DIGESTS))


class ChannelsPatchSerializer(ChannelsSerializer):
    inbox = serializers.BooleanField(required=False)
    email = serializers.BooleanField(required=False)
    push = serializers.BooleanField(required=False)


class KindsPatchSerializer(StrictSerializer):
    like = ChannelsPatchSerializer(required=False)
    reaction = ChannelsPatchSerializer(required=False)
    reply = ChannelsPatchSerializer(required=False)
    mention = ChannelsPatchSerializer(required=False)
    message = ChannelsPatchSerializer(required=False)


class PreferencesPatchSerializer(StrictSerializer):
    """Any part of the preferences; what is left out stays as it is."""

    kinds = KindsPatchSerializer(required=False)
    digest = serializers.ChoiceField(choices=list(selectors.DIGESTS), required=False)


class PreferencesApi(APIView):
    """The caller's notification preferences: read them (GET) or change any part (PATCH).

    The PATCH body's types are checked strictly (booleans are JSON true/false); anything
    not in the GET's shape is a 400 naming the field (`kinds.like.email`), and nothing is
    changed. Two PATCHes of different fields never undo each other.
    """

    permission_classes = [IsAuthenticated]
    parser_classes = [SafeJSONParser]  # the body is nested JSON; a form cannot say it

    @extend_schema(responses={200: PreferencesSerializer})
    def get(self, request):
        # Strongly consistent: the person sees a change they just made, from any device.
        preferences = selectors.preferences_get(user_id=str(request.user.pk), consistent=True)
        return Response(preferences.as_json())

    @extend_schema(request=PreferencesPatchSerializer, responses={200: PreferencesSerializer})
    def patch(self, request):
        preferences = services.preferences_update(user_id=str(request.user.pk), patch=request.data)
        return Response(preferences.as_json())


class ThreadStateSerializer(serializers.Serializer):
    thread_id = serializers.CharField(help_text="The thread's first comment (the comment itself, or its root).")
    muted = serializers.BooleanField()
    watching = serializers.BooleanField()


class _ThreadStateApi(APIView):
    """PUT turns a state of the comment's thread on, DELETE off; both answer the thread's state.
    404 for an unknown, hidden or deleted comment."""

    permission_classes = [IsAuthenticated]
    turn_on: Callable[..., str | None]
    turn_off: Callable[..., str | None]

    def _answer(self, request, comment_id: str, change: Callable[..., str | None]) -> Response:
        thread_id = selectors.comment_thread_find(comment_id=comment_id)
        state = change(user_id=str(request.user.pk), thread_id=thread_id)
        return Response({"thread_id": thread_id, "muted": state == "mute", "watching": state == "watch"})

    @extend_schema(request=None, responses={200: ThreadStateSerializer})
    def put(self, request, comment_id: str):
        return self._answer(request, comment_id, type(self).turn_on)

    @extend_schema(request=None, responses={200: ThreadStateSerializer})
    def delete(self, request, comment_id: str):
        return self._answer(request, comment_id, type(self).turn_off)


class CommentMuteApi(_ThreadStateApi):
    """Mute (PUT) or unmute (DELETE) the thread of a comment: no notification from it while muted.

    Muting replaces a watch. Both idempotent; unmuting a thread you watch leaves the watch.
    404 for an unknown, hidden or deleted comment.
    """

    turn_on = staticmethod(services.thread_mute)
    turn_off = staticmethod(services.thread_unmute)


class CommentWatchApi(_ThreadStateApi):
    """Watch (PUT) or stop watching (DELETE) the thread of a comment: every reply anywhere in it
    notifies you, rolled up per thread. Watching a muted thread unmutes it. Both idempotent.
    404 for an unknown, hidden or deleted comment.
    """

    turn_on = staticmethod(services.thread_watch)
    turn_off = staticmethod(services.thread_unwatch)
