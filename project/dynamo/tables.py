"""DynamoDB plumbing shared by every app: table naming, the connection used for
transactions, the registry of PynamoDB models, and creating/checking tables.

Every PynamoDB model of the project declares `Meta = table_meta("<logical name>")`
in its app's `models.py`; `registered_models()` finds them in the models modules
Django's app registry imported, so a new table is created by `create_tables` as soon
as its model exists in an installed app.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, cast

from botocore import useragent as botocore_useragent
from django.conf import settings
from pynamodb import settings as pynamodb_settings
from pynamodb.connection import Connection
from pynamodb.exceptions import TableDoesNotExist, TableError
from pynamodb.models import MetaProtocol, Model

from project.errors import error_code

logger = logging.getLogger(__name__)

TABLE_WAIT_SECONDS = 120.0  # how long a new table (or index) may take to become ACTIVE before we give up
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


class TableMeta(MetaProtocol, Protocol):
    """What `table_meta` makes: PynamoDB's `Meta`, plus the table's name without the prefix."""

    logical_name: str


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


def registered_models() -> list[type[Model]]:
    """Every PynamoDB model declared in an installed app's `models` module, by logical name.

    Django imported those modules when it loaded the apps (`AppConfig.models_module`);
    only classes defined there with a `table_meta` Meta count, not ones imported into it.
    """
    from django.apps import apps

    found: dict[str, type[Model]] = {}
    for config in apps.get_app_configs():
        module = config.models_module
        if module is None:
            continue
        for _, candidate in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(candidate, Model)
                and candidate is not Model
                and candidate.__module__ == module.__name__
                and hasattr(candidate.Meta, "logical_name")
            ):
                found[cast(TableMeta, candidate.Meta).logical_name] = candidate
    return [found[name] for name in sorted(found)]


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


# --- create_tables / --check ------------------------------------------------


@dataclass
class TableReport:
    """What `create_tables` did or found for one table."""

    logical_name: str
    table_name: str
    created: bool = False
    drift: list[str] = field(default_factory=list)
    status: str = ""
    item_count: int | None = None
    protected: list[str] = field(default_factory=list)  # switched on for a created table (AWS only)
    unchecked: list[str] = field(default_factory=list)  # what the endpoint could not say (--check)


# `Model._get_schema()` and `_ttl_attribute()` are PynamoDB's private (pinned 6.1.0): the
# same declarations `Model.create_table` sends, which PynamoDB has no public reader of;
# comparing against them is how `create_tables --check` finds drift.
def _declared_indexes(model: type[Model]) -> dict[str, dict[str, Any]]:
    schema = cast(dict[str, Any], model._get_schema())  # read by a key held in a variable
    declared = {}
    for kind, key in (("GSI", "global_secondary_indexes"), ("LSI", "local_secondary_indexes")):
        for index in schema[key]:
            declared[index["index_name"]] = {
                "kind": kind,
                "keys": sorted((k["KeyType"], k["AttributeName"]) for k in index["key_schema"]),
                "projection": _projection(index["projection"]),
            }
    return declared


def _projection(projection: dict[str, Any]) -> str:
    """`ALL`, `KEYS_ONLY`, or `INCLUDE [a, b]`: what an index carries, comparable."""
    included = projection.get("NonKeyAttributes")
    return f"{projection['ProjectionType']} {sorted(included)}" if included else projection["ProjectionType"]


def _ttl_attribute_name(model: type[Model]) -> str | None:
    ttl = model._ttl_attribute()
    return ttl.attr_name if ttl else None


def table_drift(model: type[Model], description: dict[str, Any], ttl_description: dict[str, Any] | None) -> list[str]:
    """Differences between what `model` declares and the live table `description`."""
    drift = []
    schema = model._get_schema()
    declared_keys = sorted((k["KeyType"], k["AttributeName"]) for k in schema["key_schema"])
    live_keys = sorted((k["KeyType"], k["AttributeName"]) for k in description["KeySchema"])
    if declared_keys != live_keys:
        drift.append(f"primary key is {live_keys}, model declares {declared_keys} (recreate the table)")
    live: dict[str, dict[str, Any]] = {}
    for kind, key in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes")):
        for index in description.get(key, []):
            live[index["IndexName"]] = {
                "kind": kind,
                "keys": sorted((k["KeyType"], k["AttributeName"]) for k in index["KeySchema"]),
                "projection": _projection(index["Projection"]),
            }
    for name, want in _declared_indexes(model).items():
        have = live.get(name)
        if have is None:
            if want["kind"] == "LSI":
                drift.append(
                    f"LSI {name} is missing: a local secondary index can only be created with the "
                    "table, so the table must be recreated (export, drop, create_tables, import)"
                )
            else:
                drift.append(f"GSI {name} is missing")
        elif have != want:
            drift.append(f"{want['kind']} {name} is {have}, model declares {want}")
    for name in sorted(set(live) - set(_declared_indexes(model))):
        drift.append(
            f"{live[name]['kind']} {name} exists but no model declares it (it still costs a write whenever "
            "an item it carries changes; `create_tables --drop-undeclared` removes a GSI)"
        )
    ttl_name = _ttl_attribute_name(model)
    if ttl_name:
        ttl = (ttl_description or {}).get("TimeToLiveDescription", {})
        if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING") or ttl.get("AttributeName") != ttl_name:
            drift.append(f"TTL on {ttl_name} is not enabled")
    return drift


def table_describe(name: str) -> dict[str, Any] | None:
    """DescribeTable's `Table` for the physical table `name`, None when there is no such table."""
    try:
        return cast(dict[str, Any], client().describe_table(TableName=name)["Table"])
    except client().exceptions.ResourceNotFoundException:
        return None


def table_wait_active(name: str, *, timeout: float = TABLE_WAIT_SECONDS) -> dict[str, Any]:
    """Wait until the table `name` and every one of its GSIs are ACTIVE (DynamoDB builds one
    index at a time; an index that reports no status, as DynamoDB Local's may, counts as built)."""
    return _table_wait(
        name,
        lambda description: (
            description["TableStatus"] == "ACTIVE"
            and all(
                index.get("IndexStatus", "ACTIVE") == "ACTIVE"
                for index in description.get("GlobalSecondaryIndexes", [])
            )
        ),
        what="ACTIVE with its indexes",
        timeout=timeout,
    )


def _table_wait(
    name: str, done: Callable[[dict[str, Any]], bool], *, what: str, timeout: float = TABLE_WAIT_SECONDS
) -> dict[str, Any]:
    """Describe the table `name` every 0.2 s until `done(description)`; returns that description."""
    deadline = time.monotonic() + timeout
    while True:
        description = table_describe(name)
        if description and done(description):
            return description
        if time.monotonic() > deadline:
            raise TimeoutError(f"table {name} not {what} after {timeout:.0f}s")
        time.sleep(0.2)


def _ensure_ttl(model: type[Model]) -> None:
    ttl_name = _ttl_attribute_name(model)
    if not ttl_name:
        return
    current = client().describe_time_to_live(TableName=model.Meta.table_name)["TimeToLiveDescription"]
    if current.get("TimeToLiveStatus") in ("ENABLED", "ENABLING") and current.get("AttributeName") == ttl_name:
        return
    client().update_time_to_live(
        TableName=model.Meta.table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_name},
    )


def _ensure_gsis(model: type[Model], description: dict[str, Any]) -> None:
    """Add declared GSIs that the live table lacks (unlike LSIs, GSIs can be added later)."""
    live = {index["IndexName"] for index in description.get("GlobalSecondaryIndexes", [])}
    schema = model._get_schema()
    definitions = {d["AttributeName"]: d for d in schema["attribute_definitions"]}
    for index in schema["global_secondary_indexes"]:
        if index["index_name"] in live:
            continue
        logger.info("adding GSI %s to %s", index["index_name"], model.Meta.table_name)
        used = [definitions[k["AttributeName"]] for k in index["key_schema"]]
        client().update_table(
            TableName=model.Meta.table_name,
            AttributeDefinitions=used,
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index["index_name"],
                        "KeySchema": sorted(index["key_schema"], key=lambda key: key["KeyType"]),  # HASH first
                        "Projection": index["projection"],
                    }
                }
            ],
        )
        table_wait_active(model.Meta.table_name)


def tables_create() -> list[TableReport]:
    """Create every missing table (with its indexes and TTL; on AWS, point-in-time recovery and
    deletion protection, project/deploy/table_protection.py); idempotent, like `migrate`."""
    from project.deploy.table_protection import table_protect

    reports = []
    for model in registered_models():
        report = TableReport(cast(TableMeta, model.Meta).logical_name, model.Meta.table_name)
        description = table_describe(model.Meta.table_name)
        if description is None:
            logger.info("creating table %s", model.Meta.table_name)
            try:
                model.create_table(wait=False, billing_mode="PAY_PER_REQUEST")
                report.created = True
            except TableError as error:  # a concurrent create_tables won the race
                if error_code(error) != "ResourceInUseException":
                    raise
            description = table_wait_active(model.Meta.table_name)
            if report.created:
                report.protected = table_protect(model.Meta.table_name)
        else:
            _ensure_gsis(model, description)
        _ensure_ttl(model)
        reports.append(report)
    return reports


def tables_check() -> list[TableReport]:
    """Describe every table and report its drift from the models, and on AWS a table without
    point-in-time recovery or deletion protection (nothing is changed)."""
    from project.deploy.table_protection import table_protection_drift

    reports = []
    for model in registered_models():
        report = TableReport(cast(TableMeta, model.Meta).logical_name, model.Meta.table_name)
        description = table_describe(model.Meta.table_name)
        if description is None:
            report.status = "MISSING"
            report.drift = ["table does not exist (run create_tables)"]
        else:
            report.status = description["TableStatus"]
            report.item_count = description.get("ItemCount")
            ttl = client().describe_time_to_live(TableName=model.Meta.table_name)
            report.drift = table_drift(model, description, ttl)
            protection = table_protection_drift(model.Meta.table_name, description)
            report.drift += protection.drift
            report.unchecked = protection.unchecked
        reports.append(report)
    return reports


def tables_drop_undeclared_indexes() -> list[str]:
    """Delete every GSI that no model declares (a replaced index); returns `table.index` of each.

    Run it once every process runs the code that no longer reads the old index: until
    then, an old process's Query of it would fail. DynamoDB deletes one index of a table
    at a time, so each deletion is waited for. LSIs cannot be dropped (nor are they here).
    """
    dropped = []
    for model in registered_models():
        description = table_describe(model.Meta.table_name)
        if description is None:
            continue
        declared = _declared_indexes(model)
        for index in description.get("GlobalSecondaryIndexes", []):
            name = index["IndexName"]
            if name in declared:
                continue
            logger.info("dropping GSI %s of %s: no model declares it", name, model.Meta.table_name)
            client().update_table(
                TableName=model.Meta.table_name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": name}}]
            )
            _table_wait(model.Meta.table_name, _index_gone(name), what=f"rid of index {name}")
            dropped.append(f"{model.Meta.table_name}.{name}")
    return dropped


def _index_gone(index: str) -> Callable[[dict[str, Any]], bool]:
    def gone(description: dict[str, Any]) -> bool:
        return all(each["IndexName"] != index for each in description.get("GlobalSecondaryIndexes", []))

    return gone


def tables_delete() -> None:
    """Drop every table of this prefix (tests and benchmarks only)."""
    for model in registered_models():
        try:
            model.delete_table()
        except TableDoesNotExist:
            pass


@contextlib.contextmanager
def scratch_tables(*, prefix: str, external_host: str | None = None) -> Iterator[str]:
    """Every table under a fresh `prefix`, on `external_host` or on an in-memory DynamoDB
    Local started for the occasion (tests and benchmarks); yields the endpoint.

    On exit the DynamoDB Local is stopped, or the tables dropped from the external host.
    """
    from project.dynamo import local as dynamo_local

    process = None
    host = external_host
    if host is None:
        port = dynamo_local.free_port()
        process = dynamo_local.start(port=port)
        host = f"http://127.0.0.1:{port}"
    point_models_at(host, prefix=f"{prefix}{uuid.uuid4().hex[:6]}_")
    tables_create()
    try:
        yield host
    finally:
        if process is not None:
            dynamo_local.stop(process)
        else:
            tables_delete()
