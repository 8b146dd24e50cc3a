"""JSON API of the social room (docs/reference/http.md): users, tokens, comments, likes."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from actions.accounts import account_sign_up
from actions.comments import comment_create, comment_edit
from actions.likes import like_add, like_remove
from project.errors import NotFound, PermissionDenied
from project.http.fresh import FRESH_COMMENTS, FRESH_LIKES
from project.http.idempotency import IDEMPOTENCY_PARAMETER, idempotent
from project.http.schema import page_parameters
from project.http.security import client_ip, request_cross_site
from project.http.serializers import NoBlankSerializer, StrictSerializer, page_query_serializer
from project.identity.api_tokens import TokenLogInSerializer, api_token_issue, api_token_revoke
from project.limits.throttles import AnonThrottle
from social import ranking, selectors, services
from social.account import language
from social.counters import LIKES, REACTIONS, VIEWS
from social.formatting import markdown_html
from social.mentions import USERNAME_MAX_LENGTH
from social.profiles.selectors import profile_get
from social.spam.levels import trust_view


class AuthorSerializer(serializers.Serializer):
    id = serializers.CharField()
    username = serializers.CharField()
    display_name = serializers.CharField()


class CommentOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    author = AuthorSerializer(allow_null=True, help_text="Null for a deleted comment: its author is not named.")
    body = serializers.CharField(help_text="The text as its author typed it (its Markdown source).")
    html = serializers.SerializerMethodField(
        help_text="`body` as pages show it: its Markdown subset rendered, sanitised, mentions linked; empty if deleted."
    )
    parent_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    like_count = serializers.IntegerField()
    liked = serializers.BooleanField()
    reactions = serializers.DictField(
        child=serializers.IntegerField(),
        source="reactions.counts",
        help_text="Count per reaction name, only those above 0 (thumbs_up, heart, laugh, hooray, confused, eyes).",
    )
    my_reactions = serializers.ListField(
        child=serializers.CharField(), source="reactions.mine", help_text="The caller's own reactions, by name."
    )
    edited_at = serializers.DateTimeField(allow_null=True, help_text="When its author last edited it, or null.")
    deleted = serializers.BooleanField(
        help_text="Its author deleted it: `body` is empty and `author` null; listed only where replies hang under it."
    )
    held = serializers.BooleanField(
        help_text="Waiting for review: only its author (and staff) can see it until staff approve it."
    )

    def get_html(self, comment: selectors.CommentView) -> str:
        return "" if comment.deleted else markdown_html(comment.body, comment.mention_usernames)

    def to_representation(self, instance):
        shown = super().to_representation(instance)
        if shown["deleted"]:
            # As on the pages ("Deleted comment"): deleting a comment takes one's name off it too.
            shown["author"] = None
        return shown


class CommentPageSerializer(serializers.Serializer):
    results = CommentOutputSerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="Cursor of the next page, or null on the last one.")


def _viewer_id(request) -> str | None:
    return str(request.user.pk) if request.user.is_authenticated else None


def _page_response(request, page: selectors.CommentPage) -> Response:
    return Response(
        {"results": CommentOutputSerializer(page.results, many=True).data, "next": page.next_cursor},
    )


PageQuerySerializer = page_query_serializer(size_max=selectors.PAGE_SIZE_MAX)


PAGE_PARAMETERS = page_parameters(size_max=selectors.PAGE_SIZE_MAX, size_default=selectors.PAGE_SIZE)


class UserCreateApi(APIView):
    """Open sign-up (closed when SIGNUP_OPEN=False)."""

    permission_classes = [AllowAny]
    throttle_classes = [AnonThrottle]

    class InputSerializer(StrictSerializer):
        username = serializers.RegexField(
            services.USERNAME_PATTERN,
            max_length=USERNAME_MAX_LENGTH,
            error_messages={"invalid": services.USERNAME_RULE},
            help_text="ASCII letters, digits and @ . + - _; unique regardless of case.",
        )
        password = serializers.CharField(max_length=services.PASSWORD_MAX_LENGTH, write_only=True)
        display_name = serializers.CharField(
            max_length=services.DISPLAY_NAME_MAX_LENGTH, required=False, allow_blank=True
        )
        email = serializers.EmailField(
            max_length=254,
            required=False,
            allow_blank=True,
            help_text="Optional: for password resets and the notification mails you choose.",
        )

        def validate_username(self, value):
            if get_user_model().objects.filter(username__iexact=value).exists():
                raise serializers.ValidationError(services.USERNAME_TAKEN)
            return value

        def validate(self, attrs):
            attrs = super().validate(attrs)
            candidate = get_user_model()(username=attrs["username"], display_name=attrs.get("display_name", ""))
            try:
                password_validation.validate_password(attrs["password"], candidate)
            except DjangoValidationError as error:
                raise serializers.ValidationError({"password": list(error.messages)}) from None
            return attrs

    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(source="pk")
        username = serializers.CharField()
        display_name = serializers.CharField()

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer}, auth=[])
    def post(self, request):
        if not settings.SIGNUP_OPEN:
            raise PermissionDenied(gettext("Sign-up is closed."))
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = account_sign_up(**serializer.validated_data, address=client_ip(request))
        return Response(self.OutputSerializer(user).data, status=status.HTTP_201_CREATED)


class TokenCreateApi(APIView):
    """Log in for an API token (`Authorization: Token <token>`), or log this client out (DELETE).

    A token works until API_TOKEN_MAX_AGE_DAYS after it was issued, until its client
    deletes it, or until the account's password changes, whichever comes first; a log-in
    then issues a new one. A browser's request sent by another site (its Origin or
    Sec-Fetch-Site says so) is refused (403) before anything is counted; clients sending
    neither header are not browsers and are served. An account with two-factor on sends its code as `otp` (400 naming
    it when missing or wrong); a success also sets the account's device cookie
    (project.identity.login_devices), which the client may send with its next log-ins.
    """

    throttle_classes = [AnonThrottle]

    def get_permissions(self):
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        request=TokenLogInSerializer,
        responses={200: inline_serializer("Token", {"token": serializers.CharField()})},
        auth=[],
    )
    def post(self, request):
        if request_cross_site(request):  # another site's page spending its visitors' log-in budgets
            raise PermissionDenied(gettext("Log in from this site or an API client, not from another site's page."))
        serializer = TokenLogInSerializer(data=request.data, context={"request": request})
        valid = serializer.is_valid()  # a missing or wrong `otp` raises its 400 (ApplicationError)
        refusal = getattr(request, "login_refused", None)  # project.identity.login.LimitedModelBackend
        if refusal is not None:
            raise refusal
        if not valid:
            raise serializers.ValidationError(serializer.errors)
        token = api_token_issue(user=serializer.validated_data["user"])
        return Response({"token": token.key})

    @extend_schema(operation_id="token_delete", request=None, responses={204: None})
    def delete(self, request):
        if not isinstance(request.auth, Token):  # a browser session: it has no token to delete
            raise NotAuthenticated("Log out needs the token to delete (`Authorization: Token <token>`).")
        api_token_revoke(key=request.auth.key)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CommentBodyField(serializers.CharField):
    """A comment body: its length counted as the page's box counts it (a line break is one
    character, CRLF or LF; services.line_breaks_normalize) before max_length is checked."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", services.BODY_MAX_LENGTH)
        kwargs.setdefault(
            "help_text",
            f"At most {services.BODY_MAX_LENGTH:,} characters (Unicode code points); a line break counts as one.",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        return services.line_breaks_normalize(super().to_internal_value(data))


class CommentListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        body = CommentBodyField()
        parent_id = serializers.UUIDField(required=False, allow_null=True)

    @extend_schema(parameters=PAGE_PARAMETERS, responses={200: CommentPageSerializer})
    def get(self, request):
        query = PageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.comment_timeline(
            viewer_id=_viewer_id(request),
            fresh=FRESH_LIKES.names(request),
            written=FRESH_COMMENTS.names(request),
            **query.validated_data,
        )
        return _page_response(request, page)

    @extend_schema(
        request=InputSerializer, responses={201: CommentOutputSerializer}, parameters=[IDEMPOTENCY_PARAMETER]
    )
    @idempotent
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        parent_id = serializer.validated_data.get("parent_id")
        comment = comment_create(
            author_id=str(request.user.pk),
            body=serializer.validated_data["body"],
            parent_id=str(parent_id) if parent_id else None,
        )
        view = selectors.comment_views([comment], viewer_id=str(request.user.pk))[0]
        response = Response(CommentOutputSerializer(view).data, status=status.HTTP_201_CREATED)
        FRESH_COMMENTS.remember(request, response, value=comment.comment_id)  # the next list shows it
        return response


class CommentDetailApi(APIView):
    """Read a comment; its author edits (PATCH) or deletes (DELETE) it."""

    class EditInputSerializer(StrictSerializer):
        body = CommentBodyField()

    @extend_schema(responses={200: CommentOutputSerializer})
    def get(self, request, comment_id: str):
        viewer_id = _viewer_id(request)
        view = selectors.comment_get(comment_id=comment_id, viewer_id=viewer_id, include_hidden=True)
        # A hidden comment does not exist, but for its author while it waits for review (`held`).
        if view.hidden and not (view.held and viewer_id is not None and view.author.id == viewer_id):
            raise NotFound(gettext("No such comment."))
        return Response(CommentOutputSerializer(view).data)

    @extend_schema(request=EditInputSerializer, responses={200: CommentOutputSerializer})
    def patch(self, request, comment_id: str):
        serializer = self.EditInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        comment = comment_edit(
            comment_id=comment_id, author_id=str(request.user.pk), body=serializer.validated_data["body"]
        )
        view = selectors.comment_views([comment], viewer_id=str(request.user.pk))[0]
        response = Response(CommentOutputSerializer(view).data)
        FRESH_COMMENTS.remember(request, response, value=comment_id)  # the next list shows the new text
        return response

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, comment_id: str):
        services.comment_delete(comment_id=comment_id, author_id=str(request.user.pk))
        response = Response(status=status.HTTP_204_NO_CONTENT)
        FRESH_COMMENTS.remember(request, response, value=comment_id)  # the next list shows it gone
        return response


class CommentRepliesApi(APIView):
    @extend_schema(parameters=PAGE_PARAMETERS, responses={200: CommentPageSerializer})
    def get(self, request, comment_id: str):
        selectors.comment_get(comment_id=comment_id, viewer_id=None)
        query = PageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.comment_replies(
            comment_id=comment_id,
            viewer_id=_viewer_id(request),
            fresh=FRESH_LIKES.names(request),
            written=FRESH_COMMENTS.names(request),
            **query.validated_data,
        )
        return _page_response(request, page)


class CommentLikeApi(APIView):
    """Like (PUT) or unlike (DELETE) a comment; both idempotent."""

    class OutputSerializer(serializers.Serializer):
        like_count = serializers.IntegerField()
        liked = serializers.BooleanField()

    @extend_schema(request=None, responses={200: OutputSerializer})
    def put(self, request, comment_id: str):
        state = like_add(comment_id=comment_id, user_id=str(request.user.pk))
        return self._answer(request, comment_id, state)

    @extend_schema(request=None, responses={200: OutputSerializer})
    def delete(self, request, comment_id: str):
        state = like_remove(comment_id=comment_id, user_id=str(request.user.pk))
        return self._answer(request, comment_id, state)

    def _answer(self, request, comment_id: str, state) -> Response:
        response = Response(self.OutputSerializer(state).data)
        FRESH_LIKES.remember(request, response, value=comment_id)  # the next page shows this count exactly
        return response


class PopularCommentsApi(APIView):
    """Comments ranked by their aggregated like (or view, or reaction) total, highest first.

    Totals are aggregated a few seconds after a change (`aggregate_counters`), so a
    like shows in `like_count` at once and in `total` and the order shortly after.
    Ties are ordered by comment id; hidden comments are left out.
    """

    KINDS = {"likes": LIKES, "views": VIEWS, "reactions": REACTIONS}

    class InputSerializer(NoBlankSerializer):
        kind = serializers.ChoiceField(choices=["likes", "views", "reactions"], default="likes", required=False)
        limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=ranking.RANKING_LIMIT_MAX)

    class OutputSerializer(serializers.Serializer):
        rank = serializers.IntegerField()
        total = serializers.IntegerField(help_text="The aggregated total the ranking is ordered by.")
        aggregated_at = serializers.DateTimeField(allow_null=True)
        comment = CommentOutputSerializer()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind",
                str,
                enum=["likes", "views", "reactions"],
                description="What to rank by (default likes; reactions: all six together).",
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": ranking.RANKING_LIMIT_MAX},
                description=f"How many, 1..{ranking.RANKING_LIMIT_MAX} (default 10).",
            ),
        ],
        responses={
            200: inline_serializer(
                "PopularComments",
                {"kind": serializers.CharField(), "results": OutputSerializer(many=True)},
            )
        },
    )
    def get(self, request):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        kind = query.validated_data["kind"]
        ranked = ranking.ranking_top(
            kind=self.KINDS[kind], limit=query.validated_data["limit"], viewer_id=_viewer_id(request)
        )
        return Response({"kind": kind, "results": self.OutputSerializer(ranked, many=True).data})


class ProfileSerializer(serializers.Serializer):
    id = serializers.CharField()
    username = serializers.CharField()
    display_name = serializers.CharField(help_text="The name shown beside their comments (the username if unset).")
    date_joined = serializers.DateTimeField()


class TrustNeedsSerializer(serializers.Serializer):
    comments = serializers.IntegerField(help_text="Visible comments.")
    likes = serializers.IntegerField(help_text="Likes received on them.")
    days = serializers.IntegerField(help_text="Days visited (logged in or wrote).")


class TrustSerializer(serializers.Serializer):
    level = serializers.IntegerField(help_text="0 new, 1 member, 2 regular.")
    name = serializers.CharField()
    why = serializers.CharField(help_text="Why the account has this level.")
    manual = serializers.BooleanField(help_text="Set by staff by hand.")
    comments = serializers.IntegerField()
    likes_received = serializers.IntegerField()
    days_visited = serializers.IntegerField()
    upheld_reports = serializers.IntegerField(help_text="Comments of yours staff hid or deleted.")
    next_level = serializers.IntegerField(allow_null=True, help_text="Null at the top level.")
    next_needs = TrustNeedsSerializer(allow_null=True, help_text="What the next level takes in all.")


class ProfileApi(APIView):
    """A person's public profile."""

    @extend_schema(responses={200: ProfileSerializer})
    def get(self, request, username: str):
        return Response(ProfileSerializer(profile_get(username=username)).data)


class ProfileCommentsApi(APIView):
    """A person's visible comments and replies, newest first, cursor-paginated."""

    @extend_schema(parameters=PAGE_PARAMETERS, responses={200: CommentPageSerializer})
    def get(self, request, username: str):
        person = profile_get(username=username)
        query = PageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.profile_comments(
            author_id=person.id,
            viewer_id=_viewer_id(request),
            written=FRESH_COMMENTS.names(request),
            **query.validated_data,
        )
        return _page_response(request, page)


class MeSerializer(ProfileSerializer):
    locale = serializers.CharField(help_text="en, ja or pl; empty: the browser's language.")
    time_zone = serializers.CharField(help_text="An IANA time zone name (Europe/Warsaw); empty: the browser's.")
    quiet_start = serializers.IntegerField(allow_null=True, help_text="Local hour no e-mail goes from (0-23).")
    quiet_end = serializers.IntegerField(allow_null=True, help_text="Local hour e-mail goes again from (0-23).")
    digest_hour = serializers.IntegerField(allow_null=True, help_text="Local hour of the digest; null: the site's.")
    trust = TrustSerializer(help_text="Your trust level, and what the next one needs.")


def _me(user) -> dict:
    profile = ProfileSerializer(profile_get(username=user.username)).data
    trust = TrustSerializer(trust_view(user_id=str(user.pk))).data
    return {**profile, **{name: getattr(user, name) for name in language.FIELDS}, "trust": trust}


class MeApi(APIView):
    """The caller's own profile and settings; PATCH changes any of the display name, language,
    time zone, quiet hours and digest hour (at least one)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictSerializer):
        display_name = serializers.CharField(
            max_length=services.DISPLAY_NAME_MAX_LENGTH,
            allow_blank=True,
            required=False,
            help_text="Empty: show the username.",
        )
        # Checked by social.account.language (a 400 names the field); declared for the schema.
        locale = serializers.JSONField(required=False, help_text="en, ja or pl; empty: the browser's.")
        time_zone = serializers.JSONField(required=False, help_text="An IANA name, e.g. Asia/Tokyo; empty: none.")
        quiet_start = serializers.JSONField(required=False, help_text="0-23 or null.")
        quiet_end = serializers.JSONField(required=False, help_text="0-23 or null.")
        digest_hour = serializers.JSONField(required=False, help_text="0-23 or null.")

    @extend_schema(responses={200: MeSerializer})
    def get(self, request):
        return Response(_me(request.user))

    @extend_schema(request=InputSerializer, responses={200: MeSerializer})
    def patch(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not data:
            raise serializers.ValidationError({"non_field_errors": [gettext("Send at least one field to change.")]})
        changes = language.language_changes({name: data[name] for name in language.FIELDS if name in data})
        if "display_name" in data:
            services.user_display_name_set(user=request.user, display_name=data["display_name"])
        language.user_language_set(user=request.user, changes=changes)
        return Response(_me(request.user))
