"""`DELETE /api/me/` (delete one's account) and `GET /api/me/export/` (one's data as JSON)."""

from __future__ import annotations

from django.contrib.auth import logout
from django.views.decorators.debug import sensitive_variables
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from project.http.security import client_ip
from project.http.serializers import StrictSerializer
from social import apis as social_apis
from social.account.services import account_delete_request, account_export_allow
from social.account.views import export_response


class MeApi(social_apis.MeApi):
    """The caller's own profile (GET, PATCH) and the deletion of their account (DELETE)."""

    class DeleteInputSerializer(StrictSerializer):
        password = serializers.CharField(max_length=128, help_text="The account's password, to confirm.")

    @extend_schema(
        request=DeleteInputSerializer,
        responses={
            202: inline_serializer(
                "AccountDeletion", {"status": serializers.CharField(), "requested_at": serializers.DateTimeField()}
            )
        },
        description=(
            "Delete the caller's account. A wrong password is a 400 naming `password` and counts as a failed "
            "log-in (429 once the log-in limits are spent). From the answer on, the account can no longer log in "
            "and its tokens and sessions stop working; the eraser removes its data within minutes."
        ),
    )
    @sensitive_variables("serializer")
    def delete(self, request):
        serializer = self.DeleteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        deletion = account_delete_request(
            user=request.user, password=serializer.validated_data["password"], address=client_ip(request)
        )
        if request.session.get("_auth_user_id"):
            logout(request._request)  # this browser's session ends with the answer
        return Response(
            {"status": "deletion_requested", "requested_at": deletion.requested_at}, status=status.HTTP_202_ACCEPTED
        )


class MyExportApi(APIView):
    """Everything stored about the caller, as one streamed JSON document."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The export document.")},
        description=(
            "One JSON object: `format`, `exported_at`, `user_id`, then a member per section (`profile`, "
            "`comments`, `likes`, `reactions`, `like_notifications`, `feed`, `preferences`, `thread_subscriptions`, "
            "`mail_sent`, `blocks_and_mutes`, `reports`, `activity`), streamed. Counted against LIMIT_EXPORT "
            "(429 past it)."
        ),
    )
    def get(self, request):
        account_export_allow(user_id=str(request.user.pk))
        return export_response(user_id=str(request.user.pk), username=request.user.username)
