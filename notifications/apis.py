"""JSON API of the notifications room (docs/reference/http.md): the inbox, the badge, mark read."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications import selectors, services
from notifications.presence import presence_mark
from notifications.subjects import REACTION_SUBJECT_PREFIX
from project.clock import clock
from project.http.fresh import FRESH_BADGE, FRESH_LIKES
from project.http.schema import page_parameters
from project.http.serializers import QueriesValidated, StrictSerializer, page_query_serializer
from project.limits.throttles import LiveThrottle
from social import selectors as social_selectors
from social.live import cursor_after_read, cursor_parse, live_comment, live_user, live_verdict, shared_counts


class NotifiedCommentField(serializers.CharField):
    """A comment id (its like notification) or `reaction#<comment id>` (its reaction notification),
    the id as a UUID in its usual form (else a 400 naming the field)."""

    def to_internal_value(self, data: str) -> str:
        text = super().to_internal_value(data)
        prefix = REACTION_SUBJECT_PREFIX if text.startswith(REACTION_SUBJECT_PREFIX) else ""
        try:
            return f"{prefix}{uuid.UUID(text.removeprefix(prefix))}"
        except ValueError:
            raise serializers.ValidationError(
                gettext("Must be a comment id (a UUID), or reaction#<comment id>.")
            ) from None


class ActorSerializer(serializers.Serializer):
    id = serializers.CharField()
    display_name = serializers.CharField()


class NotificationSerializer(serializers.Serializer):
    """A like notification `{id, kind: "like", comment_id, actors, actor_count, text, unread, updated_at}`
    (a reaction one: `kind: "reaction"`, marked read by `comment_ids: ["reaction#<comment_id>"]`)
    or a feed entry (`kind` "reply", "message", ...; `entry_id` set, `comment_id` null)."""

    id = serializers.CharField()
    kind = serializers.CharField()
    comment_id = serializers.CharField(allow_null=True)
    entry_id = serializers.CharField(
        required=False, help_text="Feed entries (replies, messages): the id `entry_ids` takes."
    )
    url = serializers.CharField(allow_blank=True, help_text="Feed entries: where the entry leads.")
    grouped_by = serializers.CharField(
        required=False,
        allow_null=True,
        help_text='Feed entries: "comment" (replies to one comment), "person" (one person\'s replies '
        'across your comments), "thread" (replies in a thread you watch), null (a message, a mention).',
    )
    body = serializers.CharField(
        required=False, allow_blank=True, help_text="Feed entries: a staff message's whole text (others: empty)."
    )
    actors = ActorSerializer(many=True, help_text="The actors the text names (the first likers).")
    actor_count = serializers.IntegerField()
    text = serializers.CharField()
    unread = serializers.BooleanField()
    updated_at = serializers.DateTimeField()

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not instance.entry_id:  # a like keeps exactly the shape docs/reference/http.md fixes
            data.pop("entry_id")
            data.pop("url")
            data.pop("grouped_by")
            data.pop("body")
        return data


class UnreadCountSerializer(serializers.Serializer):
    unread_count = serializers.IntegerField()


def _user_id(request) -> str:
    return str(request.user.pk)


def _unread_count_response(request) -> Response:
    return Response({"unread_count": selectors.unread_count(user_id=_user_id(request))})


def _read_response(request) -> Response:
    """A mark-read's answer: the badge now, and the cookie that has this browser's next pages
    and live polls read the badge exactly (their own change; project/http/fresh.py)."""
    response = _unread_count_response(request)
    FRESH_BADGE.remember(request, response, value=_user_id(request))
    return response


class NotificationListApi(APIView):
    """The caller's notifications: unread first (newest update first), then read ones (newest read first)."""

    permission_classes = [IsAuthenticated]

    QuerySerializer = page_query_serializer(size_max=selectors.INBOX_PAGE_SIZE_MAX, name="QuerySerializer")

    class OutputSerializer(serializers.Serializer):
        unread_count = serializers.IntegerField()
        results = NotificationSerializer(many=True)
        next = serializers.CharField(allow_null=True, help_text="Cursor of the next page, or null on the last one.")

    @extend_schema(
        parameters=page_parameters(size_max=selectors.INBOX_PAGE_SIZE_MAX, size_default=selectors.INBOX_PAGE_SIZE),
        responses={200: OutputSerializer},
    )
    def get(self, request):
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.notification_inbox(user_id=_user_id(request), **query.validated_data)
        return Response(
            {
                "unread_count": page.unread_count,
                "results": NotificationSerializer(page.results, many=True).data,
                "next": page.next_cursor,
            }
        )


class NotificationUnreadCountApi(APIView):
    """The unread badge: unread likes plus unread feed entries."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: UnreadCountSerializer})
    def get(self, request):
        return _unread_count_response(request)


class NotificationReadApi(APIView):
    """Mark the given notifications read (ids of other users' comments change nothing)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictSerializer):
        comment_ids = serializers.ListField(
            child=NotifiedCommentField(max_length=60),
            required=False,
            max_length=services.MARK_READ_IDS_MAX,
            help_text=(
                "Comments whose like notification was shown, `reaction#<comment id>` for a reaction"
                f" notification (at most {services.MARK_READ_IDS_MAX})."
            ),
        )
        entry_ids = serializers.ListField(
            child=serializers.CharField(max_length=200),
            required=False,
            max_length=services.MARK_READ_IDS_MAX,
            help_text=f"Feed entries that were shown (at most {services.MARK_READ_IDS_MAX}).",
        )

        schema_extra = {
            "anyOf": [{"required": ["comment_ids"]}, {"required": ["entry_ids"]}],
            "description": "Give comment_ids or entry_ids (or both); unknown fields are refused.",
        }

        def validate(self, attrs):
            attrs = super().validate(attrs)
            if "comment_ids" not in attrs and "entry_ids" not in attrs:
                raise serializers.ValidationError({"comment_ids": [gettext("Give comment_ids or entry_ids.")]})
            return attrs

    @extend_schema(request=InputSerializer, responses={200: UnreadCountSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.inbox_mark_read(
            user_id=_user_id(request),
            comment_ids=[str(comment_id) for comment_id in serializer.validated_data.get("comment_ids", [])],
            entry_ids=serializer.validated_data.get("entry_ids", []),
        )
        return _read_response(request)


class NotificationReadAllApi(APIView):
    """Mark every notification of the caller read."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: UnreadCountSerializer})
    def post(self, request):
        services.inbox_mark_all_read(user_id=_user_id(request))
        return _read_response(request)


LIVE_COMMENTS_MAX = 50
LIVE_QUERIES_KEPT = 1000  # query strings validated once per process: ~7 MB at most (50 ids each), under 1 MB typically


LIVE_HEADERS = [
    OpenApiParameter("ETag", str, OpenApiParameter.HEADER, description="Send it back as If-None-Match.", response=True),
    OpenApiParameter(
        "X-Poll-Interval",
        int,
        OpenApiParameter.HEADER,
        description="Seconds to wait before the next poll.",
        response=True,
    ),
]


class LiveApi(APIView):
    """What an open page follows, in one cheap request: the caller's unread count and the
    like counts of the comments it shows (the page asks every LIVE_POLL_INTERVAL seconds
    while it is visible; `X-Poll-Interval` says how often).

    A conditional request (`If-None-Match` with the ETag of an earlier answer or of the page)
    whose badge and comments have no signal in the change log since (social/live.py) is
    answered 304 without reading anything of the caller's; at least every LIVE_FULL_EVERY
    seconds the answer is full. A full answer reads strongly what a signal says changed, the
    rest eventually consistently (half the units; at most about a second late). It has its
    own throttle (`API_THROTTLE_LIVE`, counted in DynamoDB in leased blocks: one write per
    LIMIT_LIVE_BLOCK polls), so polling spends no other API's budget.
    """

    permission_classes = [AllowAny]
    throttle_classes = [LiveThrottle]

    class InputSerializer(StrictSerializer):
        comments = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=37 * LIVE_COMMENTS_MAX,
            help_text=f"Comma-separated ids of the comments shown (at most {LIVE_COMMENTS_MAX}).",
        )
        hearts = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Also answer `liked`, the caller's own hearts on those comments (0.5 read unit each; "
            "with an If-None-Match the log vouched for, only those on the comments that changed since).",
        )

        def validate_comments(self, value: str) -> list[str]:
            ids = [part.strip() for part in value.split(",") if part.strip()]
            if len(ids) > LIVE_COMMENTS_MAX:
                raise serializers.ValidationError(
                    gettext("At most %(live_comments_max)s comment ids.") % {"live_comments_max": LIVE_COMMENTS_MAX}
                )
            field = serializers.UUIDField(format="hex_verbose")
            try:
                return list(dict.fromkeys(str(field.to_internal_value(comment_id)) for comment_id in ids))
            except serializers.ValidationError as error:
                raise serializers.ValidationError(gettext("Comment ids must be UUIDs, separated by commas.")) from error

    class OutputSerializer(serializers.Serializer):
        unread_count = serializers.IntegerField(allow_null=True, help_text="null when not logged in.")
        like_counts = serializers.DictField(child=serializers.IntegerField(), help_text="Comment id to like count.")
        liked = serializers.DictField(
            child=serializers.BooleanField(),
            help_text="Comment id to whether the caller likes it (empty unless `hearts` and logged in; "
            "answering an If-None-Match, only the comments whose count changed since).",
        )

    @extend_schema(
        parameters=[
            InputSerializer,
            *LIVE_HEADERS,
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="The ETag of the last answer for these comments (or the page's `data-live-cursor`): "
                "304 when nothing it follows changed since.",
            ),
        ],
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="Nothing changed since the ETag sent; no body."),
        },
    )
    def get(self, request):
        query = _live_queries.validated(request)
        comment_ids = query.get("comments", [])
        user_id = _user_id(request) if request.user.is_authenticated else None
        if user_id:
            presence_mark(user_id=user_id)  # an open page: its pushes and mails wait (notifications/presence.py)
        followed = ([live_user(user_id)] if user_id else []) + [live_comment(each) for each in comment_ids]
        now = clock.now_ms()
        verdict = live_verdict(
            cursor=cursor_parse(request.headers.get("If-None-Match"), user_id=user_id), ids=followed, now_ms=now
        )
        if verdict.unchanged:
            return _live_headers(Response(status=304), verdict.cursor)
        changed = verdict.changed
        unread = None
        own_read = bool(user_id) and user_id in FRESH_BADGE.names(request)  # this browser just marked read
        badge_strong = own_read or live_user(str(user_id)) in changed
        if user_id:
            unread = selectors.unread_count(user_id=user_id, consistent=badge_strong)
        # Exact: what this browser just liked or unliked, and what a signal says changed.
        fresh = {*FRESH_LIKES.names(request), *(each for each in comment_ids if live_comment(each) in changed)}
        # Past a cursor the log vouched for, counts this process read since and that no signal
        # touched are served again (social/live.py `SharedCounts`); the rest is read.
        shared = shared_counts.valid([c for c in comment_ids if c not in fresh], now_ms=now) if verdict.vouched else {}
        wanted = [each for each in comment_ids if each not in shared]
        read = social_selectors.like_counts(comment_ids=wanted, fresh=fresh) if wanted else {}
        shared_counts.put(read, read_ms=now, strong=fresh)
        counts = {each: shared[each][0] if each in shared else read[each] for each in comment_ids}
        liked = {}
        if user_id and comment_ids and query["hearts"]:
            # A heart moves only with its count: past a cursor the log vouched for, only the
            # hearts on the comments that changed (the caller keeps the others it shows).
            hearts = [each for each in comment_ids if each in fresh] if verdict.vouched else comment_ids
            liked = social_selectors.liked_by(comment_ids=hearts, user_id=user_id, counts=counts, fresh=fresh)
        strong = {live_comment(each) for each in fresh} | ({live_user(user_id)} if user_id and badge_strong else set())
        cursor = cursor_after_read(
            read_ms=now,
            user_id=user_id,
            strong=strong & set(followed),
            all_strong=set(followed) - {live_comment(each) for each in shared} <= strong,  # what was read now
            shared=shared.values(),
        )
        return _live_headers(Response({"unread_count": unread, "like_counts": counts, "liked": liked}), cursor)


_live_queries = QueriesValidated(LiveApi.InputSerializer, kept=LIVE_QUERIES_KEPT)


def _live_headers(response: Response, cursor) -> Response:
    """Every live answer: its ETag, how soon to poll again, and no caching by anyone but the browser."""
    if cursor is not None:
        response["ETag"] = cursor.etag()
    response["X-Poll-Interval"] = f"{settings.LIVE_POLL_INTERVAL:g}"
    response["Cache-Control"] = "private, no-cache"
    return response
