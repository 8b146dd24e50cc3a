"""JSON API of reports (docs/reference/http.md): report a comment; the staff's open queue."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from actions.held import held_approve, held_reject
from actions.spam import account_remove_as_spam
from project.errors import ApplicationError
from project.http.schema import page_parameters
from project.http.serializers import NoBlankSerializer, StrictSerializer
from social.moderation import selectors, services
from social.moderation.reasons import NOTE_MAX_LENGTH, REASONS
from social.spam.held import held_rows_drop
from social.spam.held_selectors import HELD_PAGE_MAX, held_count, held_queue


class CommentReportApi(APIView):
    """Report a comment to the moderators (signed in). One report per person per comment:
    again is a no-op answering the first report. 404 for a comment the caller cannot see."""

    class InputSerializer(StrictSerializer):
        reason = serializers.ChoiceField(choices=list(REASONS), help_text="Why: one of the fixed reasons.")
        note = serializers.CharField(
            required=False, allow_blank=True, max_length=NOTE_MAX_LENGTH, help_text="Optional, in your own words."
        )

    class OutputSerializer(serializers.Serializer):
        comment_id = serializers.CharField()
        reason = serializers.CharField()
        note = serializers.CharField()
        reported_at = serializers.DateTimeField()
        reported = serializers.BooleanField(default=True)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request, comment_id: str):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        state = services.report_create(
            comment_id=comment_id,
            reporter_id=str(request.user.pk),
            reason=serializer.validated_data["reason"],
            note=serializer.validated_data.get("note", ""),
        )
        return Response(self.OutputSerializer(state).data)


class ReportedCommentSerializer(serializers.Serializer):
    id = serializers.CharField(source="comment_id")
    author = serializers.SerializerMethodField()
    body = serializers.CharField()
    hidden = serializers.BooleanField()
    hidden_by = serializers.CharField(allow_null=True, help_text='"reports" (the threshold) or "staff".')
    deleted = serializers.BooleanField()

    def get_author(self, case) -> dict[str, str] | None:
        author = case.author
        return (
            None
            if author is None
            else {"id": author.id, "username": author.username, "display_name": author.display_name}
        )


class ReportCaseSerializer(serializers.Serializer):
    comment = ReportedCommentSerializer(source="*")
    reporters = serializers.IntegerField(help_text="Distinct people who reported it, ever.")
    open_reporters = serializers.IntegerField(help_text="Reporters since the last staff decision.")
    score = serializers.FloatField(help_text="Weighted reporters since the last decision (new accounts count less).")
    reasons = serializers.DictField(child=serializers.IntegerField(), help_text="Reports per reason.")
    first_reported_at = serializers.DateTimeField(allow_null=True)
    last_reported_at = serializers.DateTimeField(allow_null=True)
    hidden_by_reports_at = serializers.DateTimeField(allow_null=True)
    author_active = serializers.BooleanField(help_text="False once the author is suspended.")


class ModerationReportsApi(APIView):
    """The open report queue (staff only): newest report first, or most reporters first."""

    permission_classes = [IsAdminUser]

    class InputSerializer(NoBlankSerializer):
        order = serializers.ChoiceField(choices=["newest", "most"], required=False, default="newest")
        cursor = serializers.CharField(required=False, allow_blank=True, max_length=2000)
        limit = serializers.IntegerField(required=False, min_value=1, max_value=selectors.QUEUE_PAGE_MAX)

    class OutputSerializer(serializers.Serializer):
        results = ReportCaseSerializer(many=True)
        next = serializers.CharField(allow_null=True, source="next_cursor")

    @extend_schema(
        parameters=[
            OpenApiParameter("order", str, enum=["newest", "most"], description="newest (default) or most reported"),
            *page_parameters(size_max=selectors.QUEUE_PAGE_MAX, size_default=selectors.QUEUE_PAGE_SIZE),
        ],
        responses={200: OutputSerializer},
    )
    def get(self, request):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.report_queue(
            order=query.validated_data["order"],
            limit=query.validated_data.get("limit"),
            cursor=query.validated_data.get("cursor") or None,
        )
        return Response(self.OutputSerializer(page).data)


class HeldCommentSerializer(serializers.Serializer):
    id = serializers.CharField(source="comment_id")
    author = serializers.SerializerMethodField()
    body = serializers.CharField()
    parent_id = serializers.CharField(allow_null=True)
    rule = serializers.CharField(help_text="What held it: new_account_link, watched_word, link_only, duplicate, burst.")
    reason = serializers.CharField()
    held_at = serializers.DateTimeField()

    def get_author(self, held) -> dict[str, str]:
        author = held.author
        return {"id": author.id, "username": author.username, "display_name": author.display_name}


class ModerationHeldApi(APIView):
    """The comments held for review (staff only), the oldest waiting first."""

    permission_classes = [IsAdminUser]

    class InputSerializer(NoBlankSerializer):
        limit = serializers.IntegerField(required=False, min_value=1, max_value=HELD_PAGE_MAX, default=50)

    class OutputSerializer(serializers.Serializer):
        count = serializers.IntegerField(help_text="Rows in the queue (a few may be decided already).")
        results = HeldCommentSerializer(many=True)

    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description=f"At most {HELD_PAGE_MAX} (default 50).")],
        responses={200: OutputSerializer},
    )
    def get(self, request):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = held_queue(limit=query.validated_data["limit"])
        held_rows_drop(page.stale)  # decided, or never written: out of the queue (idempotent)
        return Response(self.OutputSerializer({"count": held_count(), "results": page.results}).data)


class ModerationHeldDecideApi(APIView):
    """Approve (publish, with its notifications, as if posted now) or reject (delete) held comments,
    one or several at once (staff only). Each id answers on its own: `done` false when it was no
    longer held (decided already), `error` when it is unknown. Again: nothing more happens."""

    permission_classes = [IsAdminUser]

    class InputSerializer(StrictSerializer):
        comment_ids = serializers.ListField(
            child=serializers.UUIDField(), min_length=1, max_length=HELD_PAGE_MAX, help_text="The held comments."
        )
        decision = serializers.ChoiceField(choices=["approve", "reject"])

    class ResultSerializer(serializers.Serializer):
        comment_id = serializers.CharField()
        done = serializers.BooleanField(help_text="This call decided it (false: decided already).")
        error = serializers.CharField(allow_null=True)

    class OutputSerializer(serializers.Serializer):
        results = serializers.ListField(child=serializers.DictField())

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        decide = held_approve if serializer.validated_data["decision"] == "approve" else held_reject
        results = []
        for comment_id in dict.fromkeys(str(value) for value in serializer.validated_data["comment_ids"]):
            try:
                done, error = decide(comment_id=comment_id, staff=request.user, source="api"), None
            except ApplicationError as failure:
                done, error = False, failure.message
            results.append({"comment_id": comment_id, "done": done, "error": error})
        return Response({"results": results})


class ModerationSpamApi(APIView):
    """Delete an account as spam (staff only): suspended at once, every comment taken down, its
    reports dismissed, and every trace retracted by the account eraser's next pass. Again: the
    same request, nothing done twice. 403 for a staff account, 404 for an unknown one."""

    permission_classes = [IsAdminUser]

    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        comments_taken_down = serializers.IntegerField(help_text="Hidden or deleted by this call.")

    @extend_schema(request=None, responses={200: OutputSerializer})
    def post(self, request, user_id: str):
        removed = account_remove_as_spam(user_id=user_id, staff=request.user, source="api")
        return Response({"user_id": user_id, "comments_taken_down": removed})
