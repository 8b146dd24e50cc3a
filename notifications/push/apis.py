"""JSON API of Web Push: the site's public key, and the caller's browser subscriptions
(docs/reference/http.md "Push")."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.push import selectors, services
from notifications.push.content import read_token_open
from notifications.push.keys import vapid_public_key
from notifications.services import inbox_mark_read
from notifications.subjects import LIKE, REACTION, reaction_subject
from project.errors import ApplicationError, NotFound
from project.http.parsers import SafeJSONParser
from project.http.schema import ErrorSerializer

# The session remembers the subscriptions made from it: logging out removes them (signals.py).
SESSION_KEY = "push_subscriptions"


def session_remember(request, subscription_id: str) -> None:
    held = [value for value in request.session.get(SESSION_KEY, []) if value != subscription_id]
    request.session[SESSION_KEY] = [*held, subscription_id][-20:]


class PushKeyApi(APIView):
    """The VAPID application server key (base64url) that `PushManager.subscribe` takes.
    404 when the site has no VAPID key set (push is not offered here)."""

    permission_classes = [AllowAny]

    @extend_schema(
        responses={
            200: inline_serializer("PushKey", {"public_key": serializers.CharField()}),
            404: OpenApiResponse(ErrorSerializer, description="No VAPID key: no push here (`push_not_configured`)."),
        },
        auth=[],
    )
    def get(self, request):
        return Response({"public_key": vapid_public_key()})


class PushReadApi(APIView):
    """Mark read the notification a shown push was about: its click in the service worker.
    The body is `{"token": ...}`, the signed token the push carried (no session, no CSRF token:
    the token is the proof). 204; 400 for a token this site did not sign (or older than 30 days).
    Twice: read already, nothing changes."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    parser_classes = [SafeJSONParser]

    @extend_schema(
        request=inline_serializer("PushRead", {"token": serializers.CharField()}), responses={204: None}, auth=[]
    )
    def post(self, request):
        token = request.data.get("token") if isinstance(request.data, dict) else None
        found = read_token_open(token) if isinstance(token, str) and len(token) < 1000 else None
        if found is None:
            raise ApplicationError(gettext("Not a notification's token."), field="token")
        user_id, kind, entry_id = found
        if kind == LIKE:
            inbox_mark_read(user_id=user_id, comment_ids=[entry_id])
        elif kind == REACTION:
            inbox_mark_read(user_id=user_id, comment_ids=[reaction_subject(entry_id)])
        else:
            inbox_mark_read(user_id=user_id, entry_ids=[entry_id])
        return Response(status=status.HTTP_204_NO_CONTENT)


class SubscriptionSerializer(serializers.Serializer):
    id = serializers.CharField()
    device = serializers.CharField()
    endpoint_host = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)


class KeysSerializer(serializers.Serializer):
    p256dh = serializers.CharField()
    auth = serializers.CharField()


class SubscriptionInputSerializer(serializers.Serializer):
    endpoint = serializers.URLField(help_text="On a host of PUSH_SERVICE_HOSTS, https:// (else 400).")
    keys = KeysSerializer()
    expirationTime = serializers.IntegerField(required=False, allow_null=True)


class PushSubscriptionListApi(APIView):
    """The caller's browsers that receive push notifications (GET), or add this one (POST,
    the browser's `PushSubscription.toJSON()`; 201). Adding the same endpoint again is the same
    subscription (201, its keys updated). 400 naming the field for an endpoint outside
    PUSH_SERVICE_HOSTS, bad keys, or past PUSH_SUBSCRIPTIONS_MAX browsers."""

    permission_classes = [IsAuthenticated]
    parser_classes = [SafeJSONParser]

    @extend_schema(responses={200: SubscriptionSerializer(many=True)})
    def get(self, request):
        views = selectors.subscriptions_shown(user_id=str(request.user.pk))
        return Response(SubscriptionSerializer(views, many=True).data)

    @extend_schema(request=SubscriptionInputSerializer, responses={201: SubscriptionSerializer})
    def post(self, request):
        item = services.subscription_add(
            user_id=str(request.user.pk), data=request.data, device=request.headers.get("User-Agent", "")
        )
        session_remember(request, item.subscription_id)
        shown = selectors.subscription_view(item)
        return Response(SubscriptionSerializer(shown).data, status=status.HTTP_201_CREATED)


class PushSubscriptionDetailApi(APIView):
    """Remove one of the caller's subscriptions (204). Unknown (or removed already): 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, subscription_id: str):
        if not services.subscription_remove(user_id=str(request.user.pk), subscription_id=subscription_id):
            raise NotFound(gettext("No such push subscription."))
        return Response(status=status.HTTP_204_NO_CONTENT)
