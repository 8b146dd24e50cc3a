"""JSON API of the activity log: the daily rollup for staff."""

from __future__ import annotations

from datetime import timedelta

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from social.activity import selectors
from social.activity.models import ACTIONS

RANGE_DAYS_MAX = 366


class ActivityDailyApi(APIView):
    """Per day and action: how many times it happened and by how many distinct users (staff).

    Served from the daily rollup (`rollup_activity`), so today is as fresh as the last
    re-roll (every few minutes) and a finished day is final once its grace period passed.
    """

    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        start = serializers.DateField(help_text="First day (YYYY-MM-DD, in the site's time zone).")
        end = serializers.DateField(help_text="Last day, inclusive.")
        action = serializers.ChoiceField(choices=ACTIONS, required=False)

        def validate(self, attrs):
            if attrs["end"] < attrs["start"]:
                raise serializers.ValidationError({"to": [gettext("Must not be before `from`.")]})
            if attrs["end"] - attrs["start"] >= timedelta(days=RANGE_DAYS_MAX):
                raise serializers.ValidationError(
                    {
                        "to": [
                            gettext("At most %(range_days_max)s days after `from`.")
                            % {"range_days_max": RANGE_DAYS_MAX}
                        ]
                    }
                )
            return attrs

    class OutputSerializer(serializers.Serializer):
        date = serializers.DateField()
        action = serializers.CharField()
        count = serializers.IntegerField()
        users = serializers.IntegerField(help_text="Distinct users who did it that day.")

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, required=True, description="First day, YYYY-MM-DD."),
            OpenApiParameter("to", str, required=True, description=f"Last day, inclusive (at most {RANGE_DAYS_MAX})."),
            OpenApiParameter("action", str, enum=list(ACTIONS), description="Only this action."),
        ],
        responses={200: inline_serializer("ActivityDaily", {"results": OutputSerializer(many=True)})},
    )
    def get(self, request):
        # `from` is a Python keyword: the query parameters are renamed on the way in, and
        # errors on them are reported under the names the client sent.
        names = {"from": "start", "to": "end", "action": "action"}
        data = {names[key]: value for key, value in request.query_params.items() if key in names}
        query = self.InputSerializer(data=data)
        if not query.is_valid():
            back = {value: key for key, value in names.items()}
            raise serializers.ValidationError({back.get(name, name): errors for name, errors in query.errors.items()})
        rows = selectors.activity_daily(**query.validated_data)
        return Response({"results": self.OutputSerializer(rows, many=True).data})
