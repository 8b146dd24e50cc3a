"""DynamoDB calls sent without botocore's per-call machinery, when nothing unusual happens.

botocore (pinned 1.44.5) spends about 0.8 ms of CPU on the simplest GetItem: it resolves the
endpoint rules, validates and serialises the parameters against the service model, emits a
dozen events, signs through a generic request object, sends through urllib3 and parses the
answer against the output shape. A page makes several calls, so through botocore alone they
would be most of a web process's CPU. DynamoDB's wire format is plain JSON whose values already carry their types,
so a call needs little of that. `make_api_call` is the `_make_api_call` of botocore's DynamoDB
client class (installed through botocore's documented `creating-client-class` event, so other
services' clients are untouched) and, per data-plane call (`DATA_PLANE`: item reads and writes,
queries, scans, batches, transactions; the control plane, DescribeTable and the like, keeps
botocore's parsing and its datetimes):

1. emits `before-parameter-build` as botocore does (its idempotency token of a
   TransactWriteItems, the usage and metrics hooks);
2. signs the JSON body with SigV4 (`_Signer`, the same signature botocore makes, tested
   against it) and POSTs it on a kept-alive connection the process shares (`_Connections`,
   `http.client`);
3. answers a 200 with its JSON (the ResponseMetadata botocore adds, base64 values decoded by
   botocore's own parser when there are any), and a final error (a failed condition, a
   cancelled transaction) with the exception class botocore would raise, after emitting
   `response-received` (the hooks count every attempt).

Anything else goes to botocore, which sends the call again with its retries: a connection
that fails, a timeout, an answer failing its checksum or not JSON (each such attempt
reported to `response-received` as an exception), throttling, a 5xx, another error code. Every write of
this project is safe to send twice (the first attempt may have been applied), as it is for
botocore's own retries. A client with a proxy, no credentials, another signature than SigV4
or another service never takes this path, nor a call whose botocore request something hooks
into (a `Stubber`, a `before-send` handler); `DYNAMODB_FAST_CALLS=false` turns it off. Each
call handed back to botocore after the fast path was tried counts in `/metrics`
(`dynamodb_fast_path_fallbacks_total{operation,reason}`).

It relies on private names of botocore and PynamoDB, each listed in
tests/project/test_private_names.py, which fails when either library's version changes.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import http.client
import json
import logging
import os
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from typing import Any
from urllib.parse import urlsplit

from botocore import handlers as botocore_handlers
from botocore.client import BaseClient
from botocore.exceptions import ChecksumError
from botocore.httpsession import get_cert_path
from django.conf import settings
from pynamodb.connection import Connection

from project.operations.metrics import fallback_count

logger = logging.getLogger(__name__)

# Error codes that end a call whatever is tried again: answered here. Anything else (throttling,
# a 5xx, a code botocore may retry) is handed to botocore, which decides.
FINAL_ERROR_CODES = frozenset({"ConditionalCheckFailedException", "TransactionCanceledException"})
DATA_PLANE = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)
_BINARY_MARKERS = (b'"B":', b'"BS":')
_CONTENT_TYPE = "application/x-amz-json-1.0"

_botocore_call: Any = BaseClient._make_api_call  # type: ignore[attr-defined]  # private, pinned 1.44.5


def _base64(value: Any) -> str:
    """json.dumps's fallback: a binary value goes over the wire as base64, as botocore sends it."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"a DynamoDB parameter of type {type(value).__name__} cannot be sent")


class _Signer:
    """AWS Signature Version 4 of a JSON POST to "/", its key kept per day."""

    def __init__(self, credentials: Any, region: str, service: str, host: str, user_agent: str = "") -> None:
        self.credentials = credentials
        self.user_agent = f"{user_agent} dynamo-social-fast".strip()
        self.region = region
        self.service = service
        self.host = host
        self._keys: dict[tuple[str, str, str], bytes] = {}

    def _key(self, secret: str, day: str) -> bytes:
        cache_key = (secret, day, self.region)
        key = self._keys.get(cache_key)
        if key is None:
            key = hmac.digest(("AWS4" + secret).encode(), day.encode(), "sha256")
            for part in (self.region, self.service, "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            self._keys = {cache_key: key}  # one day's key (a rotated secret replaces it)
        return key

    def headers(self, target: str, body: bytes, now: datetime.datetime) -> dict[str, str]:
        frozen = self.credentials.get_frozen_credentials()
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = stamp[:8]
        headers = {
            "content-type": _CONTENT_TYPE,
            "host": self.host,
            "x-amz-date": stamp,
            "x-amz-target": target,
        }
        if frozen.token:
            headers["x-amz-security-token"] = frozen.token
        names = sorted(headers)
        signed = ";".join(names)
        canonical = "POST\n/\n\n{}\n\n{}\n{}".format(
            "\n".join(f"{name}:{headers[name]}" for name in names), signed, hashlib.sha256(body).hexdigest()
        )
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._key(frozen.secret_key, day), to_sign.encode(), "sha256").hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={frozen.access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
        )
        headers["user-agent"] = self.user_agent  # not signed, as botocore does not sign it
        return headers


class _Connections:
    """Kept-alive connections to one endpoint, shared by every client and thread of the process:
    a call takes one (the most recently used, the likeliest still open) and gives it back once
    its answer is read, so there are never more than the calls in flight, plus `KEEP` idle.
    One idle for `IDLE_SECONDS` is closed rather than used: the server may have dropped it."""

    KEEP = 64
    IDLE_SECONDS = 30.0

    def __init__(self, url: str, connect_timeout: float, read_timeout: float, ca_bundle: str | None) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.hostname = parts.hostname or ""
        default_port = 443 if self.tls else 80
        self.port = parts.port or default_port
        self.host = self.hostname if self.port == default_port else f"{self.hostname}:{self.port}"  # as signed
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.tls_context = ssl.create_default_context(cafile=ca_bundle) if self.tls else None
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []
        self._lock = threading.Lock()

    def take(self) -> tuple[http.client.HTTPConnection, bool]:
        """A connection, and whether it served a call before."""
        stale = []
        fresh_since = time.monotonic() - self.IDLE_SECONDS
        with self._lock:
            while self._idle and self._idle[0][1] < fresh_since:  # the oldest come first in the list
                stale.append(self._idle.pop(0)[0])
            kept = self._idle.pop()[0] if self._idle else None
        for connection in stale:
            connection.close()
        if kept is not None:
            return kept, True
        if self.tls_context is not None:
            made: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.hostname, self.port, timeout=self.connect_timeout, context=self.tls_context
            )
        else:
            made = http.client.HTTPConnection(self.hostname, self.port, timeout=self.connect_timeout)
        made.connect()
        _socket_tune(made.sock, self.read_timeout)
        return made, False

    def give(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.KEEP:
                self._idle.append((connection, time.monotonic()))
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection, _ in idle:
            connection.close()


_pools: dict[tuple[str, float, float, str | None], _Connections] = {}
_pools_lock = threading.Lock()


def _forked() -> None:
    """In a forked child (a gunicorn worker of a preloaded app): the parent's kept connections
    are the parent's (two processes reading one socket would take each other's answers), and a
    lock another thread held at the fork would never be released."""
    global _pools_lock
    _pools_lock = threading.Lock()
    for pool in _pools.values():
        inherited, pool._idle = pool._idle, []
        pool._lock = threading.Lock()
        for connection, _ in inherited:
            connection.close()  # this process's copy only: the parent's socket stays open


os.register_at_fork(after_in_child=_forked)


def _connections(url: str, connect_timeout: float, read_timeout: float, ca_bundle: str | None) -> _Connections:
    key = (url, connect_timeout, read_timeout, ca_bundle)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = _Connections(url, connect_timeout, read_timeout, ca_bundle)
        return pool


class _Sender:
    """One botocore DynamoDB client's fast path: where to send and how to sign."""

    def __init__(self, client: Any, url: str, signing_region: str, signing_name: str) -> None:
        config = client.meta.config
        ca_bundle = get_cert_path(client._endpoint.http_session._verify) if url.startswith("https:") else None
        self.connections = _connections(url, config.connect_timeout, config.read_timeout, ca_bundle)
        self.target_prefix = client.meta.service_model.metadata["targetPrefix"]
        credentials = client._request_signer._credentials
        user_agent = config.user_agent or ""
        self.signer = _Signer(credentials, signing_region, signing_name, self.connections.host, user_agent)

    def post(self, operation_name: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """One attempt: (status, headers with lower-case names, body). Raises on any failure."""
        headers = self.signer.headers(f"{self.target_prefix}.{operation_name}", body, _utc_now())
        while True:
            connection, reused = self.connections.take()
            try:
                connection.request("POST", "/", body, headers)
                response = connection.getresponse()
                data = response.read()
            except ConnectionError:
                connection.close()
                if reused:  # most likely closed by the server while idle: sent again on another
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if response.will_close:
                connection.close()
            else:
                self.connections.give(connection)
            return response.status, {name.lower(): value for name, value in response.getheaders()}, data


def _socket_tune(sock: Any, read_timeout: float) -> None:
    """After the connect timeout, the read timeout; no Nagle wait between headers and body (as urllib3)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(read_timeout)


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _sender_make(client: Any) -> _Sender | None:
    """The client's fast path, or None where botocore must do everything."""
    meta = client.meta
    if not settings.DYNAMODB_FAST_CALLS or meta.service_model.service_name != "dynamodb":
        return None
    credentials = client._request_signer._credentials
    config = meta.config
    if (
        credentials is None
        or config.proxies
        or urllib.request.getproxies()
        or config.signature_version not in (None, "v4")
    ):
        return None
    if client._endpoint.http_session._verify is False:  # TLS unverified: botocore's choice to make
        return None
    return _Sender(client, meta.endpoint_url, meta.region_name, meta.service_model.signing_name)


def _response_metadata(status: int, headers: dict[str, str]) -> dict[str, Any]:
    return {
        "RequestId": headers.get("x-amzn-requestid", ""),
        "HTTPStatusCode": status,
        "HTTPHeaders": headers,
        "RetryAttempts": 0,
    }


def _parse(client: Any, operation_model: Any, status: int, headers: dict[str, str], data: bytes) -> dict[str, Any]:
    """The answer as botocore returns it: its JSON; base64 values are left to botocore's parser."""
    if any(marker in data for marker in _BINARY_MARKERS):
        parser = client._endpoint._response_parser_factory.create_parser("json")
        response = {"status_code": status, "headers": headers, "body": data}
        parsed: dict[str, Any] = parser.parse(response, operation_model.output_shape)
        if status >= 300:
            client._endpoint._add_modeled_error_fields(response, parsed, operation_model, parser)
        return parsed
    parsed = json.loads(data) if data else {}
    if status >= 300:
        kind = parsed.pop("__type", "")
        message = parsed.pop("message", parsed.pop("Message", ""))
        parsed["Error"] = {"Code": kind.rpartition("#")[2], "Message": message}
    parsed["ResponseMetadata"] = _response_metadata(status, headers)
    return parsed


_BUILTIN_HANDLERS = frozenset(
    {botocore_handlers.add_recursion_detection_header, botocore_handlers.inject_api_version_header_if_needed}
)


def _hooked(client: Any, operation_name: str) -> bool:
    """Whether a handler of the request botocore builds is registered (a `Stubber`'s
    `before-call`, a test's `before-send`): then botocore must build it. The emitter's own
    lookup cache (emptied by every register and unregister) keeps this a dict lookup."""
    emitter = client.meta.events._emitter
    for stage in ("before-call", "before-send"):
        name = f"{stage}.dynamodb.{operation_name}"
        found = emitter._lookup_cache.get(name)
        if found is None:
            found = emitter._lookup_cache[name] = emitter._handlers.prefix_search(name)
        if any(handler not in _BUILTIN_HANDLERS and not _pynamodb_no_headers(handler) for handler in found):
            return True
    return False


def _pynamodb_no_headers(handler: Any) -> bool:
    """PynamoDB's `before-send` handler of a connection without extra headers: it does nothing."""
    return getattr(handler, "__func__", None) is Connection._before_send and handler.__self__._extra_headers is None


FAILURE_LOG_SECONDS = 60.0
_failure_logged_at = -FAILURE_LOG_SECONDS


def _failure_log(operation_name: str, error: Exception) -> None:
    """A warning at most once a minute per process (then debug): an endpoint the fast path
    cannot reach while botocore can (TLS, a proxy) would double every call's cost silently."""
    global _failure_logged_at
    now = time.monotonic()
    if now - _failure_logged_at >= FAILURE_LOG_SECONDS:
        _failure_logged_at = now
        logger.warning("DynamoDB %s: the fast path failed (%r); botocore sends it again", operation_name, error)
    else:
        logger.debug("DynamoDB %s: the fast path failed (%r); botocore sends it again", operation_name, error)


def _fallback(client: Any, operation_name: str, api_params: dict[str, Any], reason: str) -> Any:
    """botocore sends the call (again), with its retries; counted in /metrics by `reason`."""
    fallback_count(operation_name, reason)
    return _botocore_call(client, operation_name, api_params)


def make_api_call(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
    """The DynamoDB client's `_make_api_call`: its usual calls sent here, the others botocore's.
    The one way every DynamoDB call of the process goes (tests wrap it to inject faults)."""
    if operation_name not in DATA_PLANE:
        return _botocore_call(client, operation_name, api_params)
    sender = client.__dict__.get("_fast_sender", False)
    if sender is False:
        sender = client.__dict__["_fast_sender"] = _sender_make(client)
    if sender is None:
        return _botocore_call(client, operation_name, api_params)
    if _hooked(client, operation_name):
        return _fallback(client, operation_name, api_params, "hooked")
    operation_model = client._service_model.operation_model(operation_name)
    context: dict[str, Any] = {"client_region": client.meta.region_name, "client_config": client.meta.config}
    api_params = client._emit_api_params(api_params=api_params, operation_model=operation_model, context=context)
    body = json.dumps(api_params, separators=(",", ":"), default=_base64).encode()
    received = f"response-received.dynamodb.{operation_name}"
    try:
        status, headers, data = sender.post(operation_name, body)
        crc = headers.get("x-amz-crc32")
        if crc is not None and int(crc) != zlib.crc32(data):
            raise ChecksumError(checksum_type="crc32", expected_checksum=crc, actual_checksum=str(zlib.crc32(data)))
        parsed = _parse(client, operation_model, status, headers, data)
    except Exception as error:  # a refused or lost connection, a timeout, a garbled answer: botocore tries again
        _failure_log(operation_name, error)
        client.meta.events.emit(received, response_dict=None, parsed_response=None, context=context, exception=error)
        return _fallback(client, operation_name, api_params, "failed")
    response = {"status_code": status, "headers": headers, "body": data}
    client.meta.events.emit(received, response_dict=response, parsed_response=parsed, context=context, exception=None)
    if status == 200:
        return parsed
    code = parsed.get("Error", {}).get("Code", "")
    if status == 400 and code in FINAL_ERROR_CODES:
        raise client.exceptions.from_code(code)(parsed, operation_name)
    return _fallback(client, operation_name, api_params, "error_code" if status < 500 else "server_error")


def _dynamodb_make_api_call(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
    return make_api_call(client, operation_name, api_params)  # looked up per call: a test may wrap it


def _client_class_made(class_attributes: dict[str, Any], **_: Any) -> None:
    """`creating-client-class.dynamodb`: the DynamoDB client class calls through `make_api_call`."""
    class_attributes["_make_api_call"] = _dynamodb_make_api_call


def install() -> None:
    """Every DynamoDB client made from now on calls through `make_api_call` (ProjectConfig.ready,
    before any DynamoDB client is made)."""
    from project.dynamo.clients import client_hook_add

    client_hook_add("creating-client-class.dynamodb", _client_class_made)
