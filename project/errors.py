"""The project's own errors, and the one place they become HTTP answers.

Services raise `ApplicationError` subclasses; botocore/PynamoDB exceptions are caught
where they can be handled (retry, conflict) and turned into these, so nothing a
client sends can surface as a 500. This module imports no other project module: the
request guard (project.http.guard) and the error pages (project.http.views) sit above it and ask
`exception_answer` what a client-caused exception becomes.
"""

from __future__ import annotations

import logging
import math
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpResponseBase, JsonResponse
from django.utils.functional import Promise
from pynamodb.exceptions import PynamoDBException
from rest_framework import exceptions as drf_exceptions
from rest_framework import status
from rest_framework.response import Response

logger = logging.getLogger(__name__)

StrOrPromise = str | Promise  # a message, or one marked with gettext_lazy

THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
}


class ApplicationError(Exception):
    status_code: int = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def __init__(self, message: StrOrPromise, *, field: str | None = None):
        # A message marked with gettext_lazy is worded here, in the language of the request
        # (the reader's) that raised it.
        super().__init__(str(message))
        self.message = str(message)
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


class RateLimited(ApplicationError):
    """A limit of project.limits.store refused: 429 with Retry-After (seconds, rounded up)."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "rate_limited"

    def __init__(self, message: StrOrPromise, *, retry_after: float, field: str | None = None):
        super().__init__(message, field=field)
        self.retry_after = retry_after

    @property
    def retry_after_header(self) -> str:
        return str(max(1, math.ceil(self.retry_after)))


class LockedOut(RateLimited):
    """Too many failed log-ins for the account from this address, or from this address
    (project.identity.login_limits)."""

    code = "locked_out"


class Unavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "unavailable"


def error_code(error: BaseException | None) -> str | None:
    """The DynamoDB error code behind a botocore or PynamoDB exception, if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ClientError):
            return error.response.get("Error", {}).get("Code")
        error = getattr(error, "cause", None) or error.__cause__
    return None


CONDITION_FAILED = "ConditionalCheckFailedException"


def condition_failed(error: BaseException | None) -> bool:
    """Whether a DynamoDB write was refused because its condition did not hold."""
    return error_code(error) == CONDITION_FAILED


def is_throttling(error: BaseException | None) -> bool:
    return error_code(error) in THROTTLING_CODES


TRANSIENT_CODES = {"InternalServerError", "ServiceUnavailable", "RequestLimitExceeded"}


def is_transient(error: BaseException | None) -> bool:
    """Throttling, a 5xx, or no answer at all (timeout, connection refused or reset): the
    call may or may not have happened, and trying again later is right."""
    if is_throttling(error) or error_code(error) in TRANSIENT_CODES:
        return True
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, BotoCoreError):
            return True
        error = getattr(error, "cause", None) or error.__cause__
    return False


# DynamoDB's answers to a request it could not accept as written: with keys and
# values coming from clients (ids, cursors), this is bad input, not an outage.
CLIENT_FAULT_CODES = {"ValidationException", "SerializationException"}


def error_answer(message: str, *, code: str, field: str | None = None) -> dict[str, Any]:
    """The one error shape: {"detail", "code"}, plus the messages under the field at fault."""
    body: dict[str, Any] = {"detail": message, "code": code}
    if field:
        body[field] = [message]
    return body


def error_response(
    message: str, *, code: str, status: int, field: str | None = None, retry_after: str | None = None
) -> JsonResponse:
    """An error answered outside DRF (middleware, Django's error views): `error_answer`'s body,
    and `Retry-After` (seconds) when the client is to come back."""
    return retry_after_set(JsonResponse(error_answer(message, code=code, field=field), status=status), retry_after)


R = TypeVar("R", bound=HttpResponseBase)


def retry_after_set(response: R, seconds: str | None) -> R:
    """`response` with `Retry-After: seconds` (unless None): when a refused client may ask again."""
    if seconds is not None:
        response["Retry-After"] = seconds
    return response


def dynamo_answer(error: BaseException) -> tuple[int, str, str] | None:
    """(status, message, code) for a botocore/PynamoDB error, None for anything else.

    400 when DynamoDB refused the request as written (ValidationException: a client
    value it cannot take), 429 when throttled after the SDK's retries, 503 only when it
    is really unavailable (connection errors, 5xx, missing tables).
    """
    if not isinstance(error, PynamoDBException | ClientError | BotoCoreError):
        return None
    code = error_code(error)
    if code in CLIENT_FAULT_CODES:
        logger.warning("DynamoDB refused a request as invalid: %s", error)
        return 400, "Invalid input.", "invalid"
    if code in THROTTLING_CODES:
        return 429, "Too many requests, retry shortly.", "throttled"
    logger.exception("DynamoDB call failed")
    return 503, "The data store is unavailable, retry shortly.", "unavailable"


def exception_answer(exception: BaseException) -> tuple[int, str, str] | None:
    """(status, message, code) for the exceptions a client can cause, else None (a real 500)."""
    if isinstance(exception, RequestDataTooBig):
        return 413, f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.", "too_large"
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return 400, str(exception) or "Too many fields.", "too_many_fields"
    return dynamo_answer(exception)


DJANGO_ERROR_CODES = {404: "not_found", 403: "permission_denied"}


def retry_after_of(error: ApplicationError) -> str | None:
    """When a client refused with `error` may ask again: a limit's own wait, a second for a
    busy or unavailable store, never for a fault of the request."""
    if isinstance(error, RateLimited):
        return error.retry_after_header
    if isinstance(error, Throttled | Conflict | Unavailable):
        return "1"
    return None


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response: Response | None
    if isinstance(exc, ApplicationError):
        response = Response(error_answer(exc.message, code=exc.code, field=exc.field), status=exc.status_code)
        return retry_after_set(response, retry_after_of(exc))
    answer = exception_answer(exc)
    if answer is not None:
        status_code, message, code = answer
        response = Response(error_answer(message, code=code), status=status_code)
        return retry_after_set(response, "1" if status_code in (429, 503) else None)
    if isinstance(exc, drf_exceptions.ParseError):
        return Response(error_answer(str(exc.detail), code="parse_error"), status=400)
    # Not at import time: DRF's views load the throttles, which import this module.
    from rest_framework.views import exception_handler

    response = exception_handler(exc, context)
    if response is None:
        return None
    # Every error answer has the same shape: {"detail", "code"}, and for bad input
    # the messages under each field at fault (DRF's own shape for those).
    if isinstance(exc, drf_exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = {"detail": _first_message(fields), "code": "invalid", **fields}
    elif isinstance(response.data, dict) and "detail" in response.data:
        # DRF answered it: an APIException, or Django's Http404 / PermissionDenied it converted.
        given = getattr(getattr(exc, "detail", None), "code", None) or getattr(exc, "default_code", None)
        response.data.setdefault("code", given or DJANGO_ERROR_CODES.get(response.status_code, "error"))
    return response


def _first_message(errors: object) -> str:
    """The first message of a (nested) DRF error structure, prefixed with its field."""
    if isinstance(errors, dict):
        for name, value in errors.items():
            message = _first_message(value)
            return message if name == "non_field_errors" else f"{name}: {message}"
    if isinstance(errors, list) and errors:
        return _first_message(errors[0])
    return str(errors) or "Invalid input."
