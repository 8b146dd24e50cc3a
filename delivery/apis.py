"""JSON API of the delivery room (docs/reference/http.md): staff create, list and follow deliveries."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from delivery import selectors, services
from delivery.models import AUDIENCE_ALL, AUDIENCE_GROUP, AUDIENCE_USERNAMES, Delivery
from project.errors import error_answer
from project.http.fresh import FRESH_DELIVERIES
from project.http.idempotency import IDEMPOTENCY_PARAMETER, idempotent
from project.http.schema import page_parameters
from project.http.serializers import StrictSerializer, page_query_serializer

USERNAMES_MAX = 100_000


class AudienceSerializer(StrictSerializer):
    """Exactly one of `all: true`, `group: "<name>"`, `usernames: [...]`."""

    all = serializers.BooleanField(required=False)
    group = serializers.CharField(required=False, max_length=150)
    usernames = serializers.ListField(
        child=serializers.CharField(max_length=150, allow_blank=True),
        required=False,
        max_length=USERNAMES_MAX,
        help_text="Names in any letter case (as at log-in); an item may hold several, separated by commas, "
        "semicolons or whitespace. Unknown names are reported as given.",
    )
    ignore_unknown = serializers.BooleanField(
        required=False, default=False, help_text="With usernames: send to the known ones and report the rest."
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        given = [kind for kind in ("all", "group", "usernames") if kind in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(gettext('Give exactly one of "all": true, "group" or "usernames".'))
        if given == ["all"] and attrs["all"] is not True:
            raise serializers.ValidationError(gettext('"all" must be true.'))
        if attrs.get("ignore_unknown") and given != ["usernames"]:
            raise serializers.ValidationError(gettext('"ignore_unknown" goes with "usernames".'))
        return attrs

    def to_audience(self) -> services.Audience:
        data = self.validated_data
        if "group" in data:
            return services.Audience(kind=AUDIENCE_GROUP, group=data["group"])
        if "usernames" in data:
            return services.Audience(
                kind=AUDIENCE_USERNAMES, usernames=tuple(data["usernames"]), ignore_unknown=data["ignore_unknown"]
            )
        return services.Audience(kind=AUDIENCE_ALL)


class DeliveryOutputSerializer(serializers.Serializer):
    id = serializers.CharField(source="delivery.delivery_id")
    title = serializers.CharField(source="delivery.title")
    body = serializers.CharField(source="delivery.body")
    url = serializers.CharField(source="delivery.url", allow_null=True)
    audience = serializers.SerializerMethodField()
    status = serializers.CharField(source="delivery.status")
    total_targets = serializers.IntegerField(source="total")
    delivered_count = serializers.IntegerField(source="delivered")
    skipped_count = serializers.IntegerField(
        source="skipped", help_text="Targets dropped because their account was deleted."
    )
    chunk_count = serializers.IntegerField(source="delivery.chunk_count", allow_null=True)
    chunks_done = serializers.IntegerField(source="delivery.chunks_done")
    created_by = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(source="delivery.created_at")
    finished_at = serializers.DateTimeField(source="delivery.finished_at", allow_null=True)

    def get_audience(self, progress) -> dict:
        delivery: Delivery = progress.delivery
        audience: dict[str, object] = {"kind": delivery.audience_kind}
        if delivery.audience_group:
            audience["group"] = delivery.audience_group
        if delivery.audience_kind == AUDIENCE_USERNAMES:
            audience["requested"] = int(delivery.audience_requested)
            audience["unknown_count"] = int(delivery.unknown_count)
            audience["unknown_usernames"] = list(delivery.unknown_usernames or [])
        return audience

    def get_created_by(self, progress) -> dict:
        return {"id": progress.delivery.created_by_id, "username": progress.delivery.created_by_name}


def _output(delivery: Delivery, *, live: bool = True) -> dict:
    progress = (
        selectors.delivery_progress(delivery=delivery)
        if live
        else selectors.DeliveryProgress(
            delivery=delivery, delivered=int(delivery.delivered_count), skipped=int(delivery.skipped_count)
        )
    )
    return DeliveryOutputSerializer(progress).data


class DeliveryListCreateApi(APIView):
    """Staff: list deliveries (newest first) or create one (it is prepared and sent by the dispatcher)."""

    permission_classes = [IsAdminUser]

    class InputSerializer(StrictSerializer):
        title = serializers.CharField(max_length=100)
        body = serializers.CharField(max_length=400)
        url = serializers.URLField(max_length=500, required=False, allow_blank=True, allow_null=True)
        audience = serializers.JSONField(help_text='{"all": true} | {"group": "<name>"} | {"usernames": [...]}')

    class PageSerializer(serializers.Serializer):
        results = DeliveryOutputSerializer(many=True)
        next = serializers.CharField(allow_null=True)

    @extend_schema(
        parameters=page_parameters(size_max=selectors.PAGE_SIZE_MAX, size_default=selectors.PAGE_SIZE),
        responses={200: PageSerializer},
    )
    def get(self, request):
        query = _PageQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.delivery_list(**query.validated_data, written=FRESH_DELIVERIES.names(request))
        return Response(
            {"results": [_output(delivery, live=False) for delivery in page.results], "next": page.next_cursor}
        )

    @extend_schema(
        request=InputSerializer, responses={201: DeliveryOutputSerializer}, parameters=[IDEMPOTENCY_PARAMETER]
    )
    @idempotent
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        audience = AudienceSerializer(data=serializer.validated_data["audience"])
        if not audience.is_valid():
            raise serializers.ValidationError({"audience": audience.errors})
        try:
            delivery = services.delivery_create(
                title=serializer.validated_data["title"],
                body=serializer.validated_data["body"],
                url=serializer.validated_data.get("url") or None,
                audience=audience.to_audience(),
                created_by=request.user,
            )
        except services.UnknownUsernames as error:
            body = error_answer(error.message, code="unknown_usernames", field="audience")
            return Response(body | {"unknown_usernames": error.unknown}, status=status.HTTP_400_BAD_REQUEST)
        response = Response(_output(delivery, live=False), status=status.HTTP_201_CREATED)
        FRESH_DELIVERIES.remember(request, response, value=delivery.delivery_id)  # the next list shows it
        return response


_PageQuery = page_query_serializer(size_max=selectors.PAGE_SIZE_MAX, name="_PageQuery")


class DeliveryDetailApi(APIView):
    """Staff: a delivery with its status and live counts."""

    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: DeliveryOutputSerializer})
    def get(self, request, delivery_id: str):
        return Response(_output(selectors.delivery_get(delivery_id=delivery_id)))


class DeliveryCancelApi(APIView):
    """Staff: cancel a delivery. Nothing more is delivered; what was delivered stays."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=None, responses={200: DeliveryOutputSerializer})
    def post(self, request, delivery_id: str):
        return Response(_output(services.delivery_cancel(delivery_id=delivery_id)))
