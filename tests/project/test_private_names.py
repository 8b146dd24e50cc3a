"""Every private name of a library that this code relies on, listed with the library's version.

The fast DynamoDB path (project/dynamo/wire.py), the client set-up (project/dynamo/clients.py),
the schema reads (project/dynamo/schema/), the transactions' outcome (project/dynamo/transactions.py), the schema hooks
(project/http/schema.py) and the compiled log-in read (project/identity/compiled_get.py) reach
into botocore, PynamoDB, Django, DRF and drf-spectacular past their public API. A new version
may move any of those names without notice, so:

- `test_the_libraries_are_the_versions_checked`: fails when one of them changes version, until
  each name below has been checked against the new one and its version written here;
- `test_every_private_name_the_code_uses_is_listed`: reads the code (every `x._name` on anything
  but `self`/`cls`) and fails on a private name not listed here, or listed but no longer used;
- `test_each_listed_name_is_still_there`: each name resolves on the real objects.
"""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

import botocore.endpoint
import botocore.handlers
import botocore.httpsession
import botocore.useragent
from botocore.client import BaseClient
from django.db.models.sql.compiler import SQLCompiler
from django.db.models.sql.query import Query
from drf_spectacular.openapi import AutoSchema
from pynamodb import settings as pynamodb_settings
from pynamodb.connection import Connection
from pynamodb.transactions import TransactWrite
from rest_framework.request import Request

from project.dynamo import clients as dynamo
from social.models import Comment

ROOT = Path(__file__).resolve().parents[2]
APPS = ("actions", "config", "delivery", "notifications", "project", "social")

# The version each list was checked against (requirements-runtime.txt pins the same).
VERSIONS = {
    "botocore": "1.44.5",
    "pynamodb": "6.1.0",
    "Django": "5.2.19",
    "djangorestframework": "3.18.3",
    "drf-spectacular": "0.30.0",
}

# Private names, by library: name -> where the code uses it.
PRIVATE = {
    "botocore": {
        "_make_api_call": "wire.py: botocore's own call path, the fast path's fallback",
        "_emit_api_params": "wire.py: before-parameter-build, as botocore emits it",
        "_endpoint": "wire.py: the client's endpoint (its TLS setting, its response parser)",
        "_response_parser_factory": "wire.py: botocore's parser for answers with binary values",
        "_add_modeled_error_fields": "wire.py: an error answer's modelled fields",
        "_request_signer": "wire.py: the client's credentials",
        "_credentials": "wire.py: the client's credentials",
        "_service_model": "wire.py: the operation model",
        "_emitter": "wire.py: whether a handler hooks into the request botocore builds",
        "_handlers": "wire.py: the same",
        "_lookup_cache": "wire.py: the same, as a dict lookup",
        "_verify": "wire.py: the client's TLS verification",
        "_send": "project/testing/harness.py: faults injected where botocore sends",
    },
    "pynamodb": {
        "_before_send": "wire.py: PynamoDB's handler that adds no headers",
        "_extra_headers": "wire.py: the same",
        "_client": "clients.py: a connection's cached client (clients_make)",
        "_local": "clients.py: a connection's session per thread (clients_make)",
        "_aws_access_key_id": "clients.py: a connection's credentials (clients_make)",
        "_aws_secret_access_key": "tables.py: the same",
        "_aws_session_token": "tables.py: the same",
        "_connection": "clients.py: a model's cached connection, re-pointed (point_models_at)",
        "_get_connection": "clients.py, social/aggregation.py: a model's connection",
        "_get_schema": "schema/drift.py, schema/create.py, deploy/cloudformation.py: a model's table schema",
        "_ttl_attribute": "schema/drift.py, deploy/cloudformation.py: a model's TTL attribute",
        "_hash_key_attribute": "dynamo/batch_get.py, testing/aws_conflicts.py: key attributes",
        "_range_key_attribute": "the same",
        "_hash_keyname": "dynamo/batch_write.py: key names",
        "_range_keyname": "the same",
    },
    "djangorestframework": {
        "_request": "social/account/apis.py: the Django request DRF wraps (log-out)",
    },
    "drf-spectacular": {
        "_map_serializer": "http/schema.py: strict request bodies",
        "_get_response_bodies": "http/schema.py: the error answers of every operation",
    },
}

# Named by string (getattr), so the code scan cannot see them.
PRIVATE_BY_STRING = {
    "pynamodb": {"_condition_check_items", "_delete_items", "_put_items", "_update_items"},  # transactions.py
}

# Internals without an underscore: not documented as public API.
INTERNALS = {
    "botocore": [
        "handlers.BUILTIN_HANDLERS",  # tables.client_hook_add
        "httpsession.get_cert_path",  # wire.py
        "useragent.sanitize_user_agent_string_component",  # clients.py memoises it
    ],
    "pynamodb": ["settings.default_settings_dict"],
    "Django": ["Query.get_compiler", "SQLCompiler.as_sql", "SQLCompiler.get_converters", "apply_converters"],
}

# Underscored but public by contract: Django's model API, os._exit, namedtuple's methods.
PUBLIC_BY_CONVENTION = {"_meta", "_default_manager", "_exit", "_replace"}
# This repository's own, used across its modules.
OWN = {"_Sender", "declared_indexes", "_idle", "_lock"}


def _private_attributes_used() -> set[str]:
    used = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                used.add(node.attr)
    return used


def test_the_libraries_are_the_versions_checked():
    installed = {name: importlib.metadata.version(name) for name in VERSIONS}
    assert installed == VERSIONS, (
        "A library this code reaches into changed version: check each name of PRIVATE, PRIVATE_BY_STRING "
        "and INTERNALS against it (its changelog, its source), then write its version in VERSIONS."
    )


def test_every_private_name_the_code_uses_is_listed():
    listed = {name for names in PRIVATE.values() for name in names}
    assert _private_attributes_used() - PUBLIC_BY_CONVENTION - OWN == listed


def test_each_listed_name_is_still_there():
    client = dynamo.client()
    endpoint = client._endpoint
    emitter = client.meta.events._emitter
    for owner, name in [
        (BaseClient, "_make_api_call"),
        (BaseClient, "_emit_api_params"),
        (client, "_endpoint"),
        (endpoint, "_response_parser_factory"),
        (endpoint, "_add_modeled_error_fields"),
        (client, "_request_signer"),
        (client._request_signer, "_credentials"),
        (client, "_service_model"),
        (client.meta.events, "_emitter"),
        (emitter, "_handlers"),
        (emitter, "_lookup_cache"),
        (emitter._handlers, "prefix_search"),
        (endpoint.http_session, "_verify"),
        (botocore.endpoint.Endpoint, "_send"),
    ]:
        assert hasattr(owner, name), (owner, name)
    connection = dynamo.connection()
    for owner, name in [
        (Connection, "_before_send"),
        (connection, "_extra_headers"),
        (connection, "_client"),
        (connection, "_local"),
        (connection, "_aws_access_key_id"),
        (connection, "_aws_secret_access_key"),
        (connection, "_aws_session_token"),
        (Comment, "_connection"),
        (Comment, "_get_connection"),
        (Comment, "_get_schema"),
        (Comment, "_ttl_attribute"),
        (Comment, "_hash_key_attribute"),
        (Comment, "_range_key_attribute"),
        (Comment, "_hash_keyname"),
        (Comment, "_range_keyname"),
        (AutoSchema, "_map_serializer"),
        (AutoSchema, "_get_response_bodies"),
        (botocore.handlers, "BUILTIN_HANDLERS"),
        (botocore.httpsession, "get_cert_path"),
        (botocore.useragent, "sanitize_user_agent_string_component"),
        (pynamodb_settings, "default_settings_dict"),
        (Query, "get_compiler"),
        (SQLCompiler, "as_sql"),
        (SQLCompiler, "get_converters"),
        (SQLCompiler, "apply_converters"),
    ]:
        assert hasattr(owner, name), (owner, name)
    assert "_request" in Request.__init__.__code__.co_names  # DRF sets it on every request
    transaction = TransactWrite(connection=connection)
    for name in PRIVATE_BY_STRING["pynamodb"]:
        assert isinstance(getattr(transaction, name), list), name
