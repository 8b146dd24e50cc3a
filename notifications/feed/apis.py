"""JSON API of the feed (docs/reference/http.md): `GET /api/feed/`."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.feed import selectors as feed_selectors
from project.http.serializers import StrictSerializer


class FeedActorSerializer(serializers.Serializer):
    id = serializers.CharField()
    display_name = serializers.CharField()


class FeedEntryOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.CharField(help_text='"reply", "message", ...')
    rollup_key = serializers.CharField(allow_null=True)
    actors = FeedActorSerializer(many=True, help_text="Newest first; at most the last 10 distinct people.")
    actor_count = serializers.IntegerField(help_text="Distinct people behind the entry.")
    title = serializers.CharField(allow_blank=True)
    body = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True)
    text = serializers.CharField()
    unread = serializers.BooleanField()
    delivery_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    removed = serializers.BooleanField(help_text="What the entry pointed at was hidden or deleted since.")
    event_count = serializers.IntegerField(help_text="Events rolled into the entry (replies, for a reply entry).")
    grouped_by = serializers.ChoiceField(
        choices=["comment", "person", "thread"],
        allow_null=True,
        help_text='"comment": replies to one of your comments; "person": one person\'s further replies '
        "across your comments, rolled into one entry once they have FEED_REPLIES_PER_PERSON unread entries; "
        '"thread": replies in a thread you watch (`kind` "reply"); null: a single event (a message, a mention).',
    )


class FeedListApi(APIView):
    """The caller's feed entries, newest first (replies, delivered messages)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictSerializer):
        unread = serializers.BooleanField(required=False, default=False, help_text="Only unread entries.")

    class OutputSerializer(serializers.Serializer):
        unread_count = serializers.IntegerField(help_text="Unread feed entries.")
        results = FeedEntryOutputSerializer(many=True)

    @extend_schema(
        parameters=[OpenApiParameter("unread", bool, description="Only unread entries.")],
        responses={200: OutputSerializer},
    )
    def get(self, request):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = feed_selectors.feed_entries_list(
            user_id=str(request.user.pk), unread_only=query.validated_data["unread"]
        )
        return Response(self.OutputSerializer(page).data)
