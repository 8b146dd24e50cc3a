"""The project's own errors, and the one place they become HTTP answers.

Services raise `ApplicationError` subclasses; botocore/PynamoDB exceptions are caught
where they can be handled (retry, conflict) and turned into these, so nothing a
client sends can surface as a 500.
"""

from __future__ import annotations

import logging

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException
from rest_framework import exceptions as drf_exceptions
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

logger = logging.getLogger(__name__)

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
}


class ApplicationError(Exception):
    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class PermissionDenied(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "permission_denied"


class Conflict(ApplicationError):
    """Another writer kept winning; the client may retry (nothing was changed)."""

    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


class Throttled(ApplicationError):
    """DynamoDB refused for throughput; the client should retry after a moment."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "throttled"


class Unavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "unavailable"


def error_code(error: BaseException) -> str | None:
    """The DynamoDB error code behind a botocore or PynamoDB exception, if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ClientError):
            return error.response.get("Error", {}).get("Code")
        error = getattr(error, "cause", None) or error.__cause__
    return None


def is_throttling(error: BaseException) -> bool:
    return error_code(error) in THROTTLING_CODES


def _body(message, *, code: str, field: str | None = None) -> dict:
    body = {"detail": message, "code": code}
    if field:
        body[field] = [message]
    return body


def api_exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        response = Response(_body(exc.message, code=exc.code, field=exc.field), status=exc.status_code)
        if isinstance(exc, Throttled | Conflict | Unavailable):
            response["Retry-After"] = "1"
        return response
    if isinstance(exc, PynamoDBException | ClientError | BotoCoreError):
        if is_throttling(exc):
            response = Response(_body("Too many requests, retry shortly.", code="throttled"), status=429)
            response["Retry-After"] = "1"
            return response
        logger.exception("DynamoDB call failed")
        return Response(_body("The data store is unavailable, retry shortly.", code="unavailable"), status=503)
    if isinstance(exc, drf_exceptions.ParseError):
        return Response(_body(str(exc.detail), code="parse_error"), status=400)
    response = exception_handler(exc, context)
    if response is None:
        return None
    # Every error answer has the same shape: {"detail", "code"}, and for bad input
    # the messages under each field at fault (DRF's own shape for those).
    if isinstance(exc, drf_exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = {"detail": _first_message(fields), "code": "invalid", **fields}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data.setdefault("code", getattr(exc.detail, "code", None) or exc.default_code)
    return response


def _first_message(errors) -> str:
    """The first message of a (nested) DRF error structure, prefixed with its field."""
    if isinstance(errors, dict):
        for name, value in errors.items():
            message = _first_message(value)
            return message if name == "non_field_errors" else f"{name}: {message}"
    if isinstance(errors, list) and errors:
        return _first_message(errors[0])
    return str(errors) or "Invalid input."
