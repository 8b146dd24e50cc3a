"""`GET /api/me/notification-log/` and its page, /me/notifications/log/."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.log.selectors import CHANNELS, ChannelOutcome, notification_log

# The page's words for the log's outcomes and reasons (the API keeps the words of
# notifications/log/selectors.py, which clients may match on).
OUTCOME_WORDS = {
    "sent": gettext_lazy("sent"),
    "sending": gettext_lazy("sending"),
    "failed": gettext_lazy("failed"),
    "unknown": gettext_lazy("unknown"),
    "skipped": gettext_lazy("skipped"),
}
REASON_WORDS = {
    "preference off": gettext_lazy("preference off"),
    "read before send": gettext_lazy("read before send"),
    "thread muted": gettext_lazy("thread muted"),
    "person blocked or muted": gettext_lazy("person blocked or muted"),
    "present in a tab": gettext_lazy("present in a tab"),
    "limit reached": gettext_lazy("limit reached"),
    "address unverified": gettext_lazy("address unverified"),
    "already sent about this notification": gettext_lazy("already sent about this notification"),
    "no browser subscribed": gettext_lazy("no browser subscribed"),
    "expired": gettext_lazy("expired"),
    "retracted": gettext_lazy("retracted"),
}
# The inbox's detail: whether the entry was read.
DETAIL_WORDS = {
    "read": gettext_lazy("read"),
    "unread": gettext_lazy("unread"),
    "no longer in the inbox": gettext_lazy("no longer in the inbox"),
    "taken out of the inbox": gettext_lazy("taken out of the inbox"),
}


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


def _shown(outcome: ChannelOutcome | None) -> dict[str, object] | None:
    """An outcome in the reader's words (a reason the senders word freely stays as recorded)."""
    if outcome is None:
        return None
    return {
        "outcome": OUTCOME_WORDS.get(outcome.outcome, outcome.outcome),
        "reason": REASON_WORDS.get(outcome.reason, outcome.reason),
        "detail": DETAIL_WORDS.get(outcome.detail, outcome.detail),
    }


@login_required
def notification_log_page(request):
    """The same, as a table: when, what, and per channel what happened and why."""
    events = notification_log(user_id=str(request.user.pk))
    rows = [(event, [_shown(event.channels.get(channel)) for channel in CHANNELS]) for event in events]
    context = {"rows": rows, "retention_days": settings.NOTIFICATION_READ_RETENTION_DAYS}
    return render(request, "notifications/notification_log.html", context)
