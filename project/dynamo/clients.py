"""The DynamoDB clients every app uses: where the tables are (endpoint, prefix, table names),
each model's `Meta` (`table_meta`: host, region, timeouts and retries), the connection
transactions run on, the health checks' quick client, botocore event hooks on every client,
and making every client up front.

Every PynamoDB model of the project declares `Meta = table_meta("<logical name>")` in its
app's `models.py`; project/dynamo/schema/ creates and checks the tables they declare.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from botocore import useragent as botocore_useragent
from django.conf import settings
from pynamodb import settings as pynamodb_settings
from pynamodb.connection import Connection

from project.dynamo.schema.registry import TableMeta, registered_models

LOCAL_ACCESS_KEY = "local"  # DynamoDB Local accepts any credentials; -sharedDb ignores them.

# botocore (pinned 1.44.5) builds the User-Agent header twice per call from ~28 parts,
# sanitising each character by character: 0.24 ms of CPU each time, about 0.5 ms per
# DynamoDB call (a timeline page makes 16). The parts are the same few strings on every
# call, so the pure sanitiser is memoised: 0.08 ms per header.
if not hasattr(botocore_useragent.sanitize_user_agent_string_component, "cache_info"):
    botocore_useragent.sanitize_user_agent_string_component = lru_cache(maxsize=512)(
        botocore_useragent.sanitize_user_agent_string_component
    )


@dataclass(frozen=True)
class Endpoint:
    host: str | None
    prefix: str


# Set by `point_models_at` (tests, benchmarks) instead of writing to `settings` at run time.
_endpoint_override: Endpoint | None = None


def endpoint() -> Endpoint:
    """Where the tables are: DYNAMODB_HOST and DYNAMODB_TABLE_PREFIX, unless re-pointed."""
    return _endpoint_override or Endpoint(settings.DYNAMODB_HOST, settings.DYNAMODB_TABLE_PREFIX)


def table_name(logical_name: str) -> str:
    return endpoint().prefix + logical_name


def table_meta(logical_name: str, **extra: Any) -> TableMeta:
    """A PynamoDB `Meta` class for the table `DYNAMODB_TABLE_PREFIX + logical_name`."""
    attributes = {
        "table_name": table_name(logical_name),
        "logical_name": logical_name,
        "host": endpoint().host,
        "region": settings.DYNAMODB_REGION,
        "billing_mode": "PAY_PER_REQUEST",
        **_timeouts(),
        **extra,
    }
    if settings.DYNAMODB_LOCAL_CREDENTIALS:
        attributes["aws_access_key_id"] = LOCAL_ACCESS_KEY
        attributes["aws_secret_access_key"] = LOCAL_ACCESS_KEY
    return cast(TableMeta, type("Meta", (), attributes))


def _retries() -> dict[str, Any]:
    """botocore's "legacy" retry mode follows DynamoDB's own schedule (50, 100, 200 ms...)
    where "standard" waits up to 1, 2, 4 s: a refused connection is an error within a
    second (pages and APIs answer 503), and throttling is still retried."""
    return {"mode": "legacy", "total_max_attempts": 1 + settings.DYNAMODB_MAX_RETRY_ATTEMPTS}


def _timeouts() -> dict[str, Any]:
    """Every DynamoDB client's timeouts and retries (settings DYNAMODB_CONNECT_TIMEOUT...)."""
    # PynamoDB's models take their retry configuration from its settings only (no Meta
    # attribute); this is the dict its settings module reads when a model connects.
    # (Its dict's type is inferred from the default values; the setting takes a dict too.)
    pynamodb_settings.default_settings_dict["retry_configuration"] = _retries()  # type: ignore[assignment]
    return {
        "connect_timeout_seconds": settings.DYNAMODB_CONNECT_TIMEOUT,
        "read_timeout_seconds": settings.DYNAMODB_READ_TIMEOUT,
        "max_retry_attempts": settings.DYNAMODB_MAX_RETRY_ATTEMPTS,
        "max_pool_connections": 32,
    }


@lru_cache(maxsize=1)
def _connection(host: str | None, region: str, local: bool) -> Connection:
    kwargs: dict[str, Any] = {"host": host, "region": region, **_timeouts(), "retry_configuration": _retries()}
    if local:
        kwargs |= {"aws_access_key_id": LOCAL_ACCESS_KEY, "aws_secret_access_key": LOCAL_ACCESS_KEY}
    return Connection(**kwargs)


def connection() -> Connection:
    """The connection PynamoDB transactions (TransactWrite/TransactGet) run on."""
    return _connection(endpoint().host, settings.DYNAMODB_REGION, settings.DYNAMODB_LOCAL_CREDENTIALS)


# botocore makes a client's methods (describe_table...) at run time: no type names them.
def client() -> Any:
    """The raw botocore DynamoDB client (benchmarks' floors, describe calls)."""
    return connection().client


@lru_cache(maxsize=1)
def _probe_connection(host: str | None, region: str, local: bool) -> Connection:
    kwargs: dict[str, Any] = {"host": host, "region": region, "connect_timeout_seconds": 1, "read_timeout_seconds": 2}
    kwargs["max_retry_attempts"] = 0
    if local:
        kwargs |= {"aws_access_key_id": LOCAL_ACCESS_KEY, "aws_secret_access_key": LOCAL_ACCESS_KEY}
    return Connection(**kwargs)


def probe_client() -> Any:
    """A botocore client that tries once with short timeouts: health checks must answer fast."""
    return _probe_connection(endpoint().host, settings.DYNAMODB_REGION, settings.DYNAMODB_LOCAL_CREDENTIALS).client


def client_hook_add(event_name: str, handler: Callable[..., Any]) -> None:
    """Register a botocore event handler on every DynamoDB client made from now on.

    There is no one shared client: PynamoDB makes a botocore session per thread and a client
    per model's connection, lazily, and `connection()` has its own. A botocore session
    registers the handlers listed in `botocore.handlers.BUILTIN_HANDLERS` when it is made, so
    the handler is added there (once); call this at start-up, before the first DynamoDB call.
    """
    import botocore.handlers

    if (event_name, handler) not in botocore.handlers.BUILTIN_HANDLERS:
        botocore.handlers.BUILTIN_HANDLERS.append((event_name, handler))


def clients_make() -> int:
    """Make the botocore client of every model, of `connection()` and of `probe_client()` now,
    from one botocore session; returns how many were made. PynamoDB makes a model's client
    on its first call, from a session of its own, for which botocore loads its service model
    anew (0.1 s of CPU per client, some thirty per process); from one session they cost a few
    ms each. A new web worker calls this before its first request (serving.hooks.warm_up)."""
    from botocore.session import get_session

    session = get_session()
    connections = [model._get_connection().connection for model in registered_models()]
    probe = _probe_connection(endpoint().host, settings.DYNAMODB_REGION, settings.DYNAMODB_LOCAL_CREDENTIALS)
    made = 0
    # PynamoDB's private parts (pinned 6.1.0): its cached client, its session per thread.
    for each in [*connections, connection(), probe]:
        if each._client is not None:
            continue
        if getattr(each._local, "session", None) is None:
            if each._aws_access_key_id and each._aws_secret_access_key:
                session.set_credentials(each._aws_access_key_id, each._aws_secret_access_key, each._aws_session_token)
            each._local.session = session
        each.client  # noqa: B018  (the property makes it)
        made += 1
    return made


def point_models_at(host: str | None, prefix: str | None = None) -> None:
    """Re-point every model (and the transaction connection) at another endpoint.

    Settings are read when the models are imported; tests and benchmarks start their
    own DynamoDB Local afterwards and call this with its address.
    """
    global _endpoint_override
    _endpoint_override = Endpoint(host, endpoint().prefix if prefix is None else prefix)
    for model in registered_models():
        model.Meta.host = host
        model.Meta.table_name = table_name(cast(TableMeta, model.Meta).logical_name)
        model._connection = None  # PynamoDB caches it privately; no public way to re-point a model
    _connection.cache_clear()
    _probe_connection.cache_clear()
