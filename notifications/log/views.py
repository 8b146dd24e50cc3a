"""`GET /api/me/notification-log/` and its page, /me/notifications/log/."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.log.selectors import CHANNELS, notification_log


class ChannelOutcomeSerializer(serializers.Serializer):
    outcome = serializers.CharField(help_text="sent, failed, unknown, skipped (or sending, within its lease)")
    reason = serializers.CharField(help_text="why skipped or failed, in the log's words; empty when sent")
    detail = serializers.CharField(help_text="what the sender recorded; for the inbox: read or unread")
    at = serializers.DateTimeField()


class LogEventSerializer(serializers.Serializer):
    event = serializers.CharField(source="source", help_text="the event (a reply id, like:<comment>:<n>, ...)")
    kind = serializers.CharField()
    at = serializers.DateTimeField()
    text = serializers.CharField()
    channels = serializers.DictField(child=ChannelOutcomeSerializer(), help_text="inbox, email, push: those that apply")


class NotificationLogApi(APIView):
    """Why the caller was notified, or not: each event, newest first, with per channel (inbox,
    e-mail, push) its outcome and reason. Read only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: LogEventSerializer(many=True)})
    def get(self, request):
        events = notification_log(user_id=str(request.user.pk))
        return Response(LogEventSerializer(events, many=True).data)


@login_required
def notification_log_page(request):
    """The same, as a table: when, what, and per channel what happened and why."""
    events = notification_log(user_id=str(request.user.pk))
    rows = [(event, [event.channels.get(channel) for channel in CHANNELS]) for event in events]
    context = {"rows": rows, "retention_days": settings.NOTIFICATION_READ_RETENTION_DAYS}
    return render(request, "notifications/notification_log.html", context)
