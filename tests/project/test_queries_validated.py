"""project.http.serializers.QueriesValidated: a repeated query string is validated once per
process, each caller gets its own copy, refusals are never kept, and only the last `kept`
strings are."""

import pytest
from rest_framework import serializers
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from project.http.serializers import QueriesValidated, StrictSerializer


class IdsSerializer(StrictSerializer):
    ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    flag = serializers.BooleanField(required=False, default=False)

    validations = 0

    def validate(self, attrs):
        IdsSerializer.validations += 1
        return super().validate(attrs)


def request(query: str):
    return APIView().initialize_request(APIRequestFactory().get(f"/api/anything/?{query}"))


def test_a_repeated_query_is_validated_once_and_each_caller_gets_its_own_copy():
    queries = QueriesValidated(IdsSerializer, kept=10)
    IdsSerializer.validations = 0
    first = queries.validated(request("ids=1&ids=2&flag=true"))
    assert first == {"ids": [1, 2], "flag": True}
    first["ids"].append(3)
    assert queries.validated(request("ids=1&ids=2&flag=true")) == {"ids": [1, 2], "flag": True}
    assert queries.validated(request("ids=1&ids=2")) == {"ids": [1, 2], "flag": False}
    assert IdsSerializer.validations == 2


def test_a_refused_query_is_refused_every_time():
    queries = QueriesValidated(IdsSerializer, kept=10)
    for _ in range(2):
        with pytest.raises(serializers.ValidationError) as refused:
            queries.validated(request("ids=x&other=1"))
        assert set(refused.value.detail) == {"ids"}
    with pytest.raises(serializers.ValidationError) as refused:
        queries.validated(request("other=1"))
    assert set(refused.value.detail) == {"other"}


def test_only_the_last_kept_queries_are_kept():
    queries = QueriesValidated(IdsSerializer, kept=2)
    IdsSerializer.validations = 0
    for query in ("ids=1", "ids=2", "ids=3", "ids=3", "ids=1"):
        queries.validated(request(query))
    assert IdsSerializer.validations == 4  # ids=1 was dropped for ids=3, then validated again
