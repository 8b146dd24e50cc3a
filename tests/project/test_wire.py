"""DynamoDB calls sent without botocore's per-call machinery (project/dynamo/wire.py), against
DynamoDB Local, each answer compared with what botocore itself returns for the same call."""

from __future__ import annotations

import datetime
import http.server
import logging
import socket
import ssl
import threading
from typing import Any, ClassVar
from unittest import mock

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from project.dynamo import clients as dynamo
from project.dynamo import wire
from project.models import UsageTally
from project.testing.harness import WAIT_SECONDS
from social.models import CounterShard

NOW = datetime.datetime(2026, 11, 26, 6, 30, 15, tzinfo=datetime.UTC)


@pytest.fixture
def client():
    """A new botocore client (its fast path made on its first call), the connection's session and config."""
    made = dynamo.connection().session.create_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=dynamo.endpoint().host,
        config=dynamo.connection().client.meta.config,
        aws_access_key_id=dynamo.LOCAL_ACCESS_KEY,
        aws_secret_access_key=dynamo.LOCAL_ACCESS_KEY,
    )
    return made


def botocore(client: Any, operation: str, **params: Any) -> Any:
    """The same call through botocore alone."""
    return wire._botocore_call(client, operation, params)


def without_metadata(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "ResponseMetadata"}


def shard_key(name: str) -> dict[str, Any]:
    return {"counter_key": {"S": name}, "shard": {"N": "1"}}


@pytest.mark.parametrize("token", [None, "session-token/with+odd=chars"])
def test_the_signature_is_botocores(token):
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    body = b'{"TableName":"t","Key":{"k":{"S":"caf\\u00e9"}}}'
    signer = wire._Signer(credentials, "eu-west-1", "dynamodb", "dynamodb.eu-west-1.amazonaws.com")

    ours = signer.headers("DynamoDB_20120810.GetItem", body, NOW)

    request = AWSRequest(
        method="POST",
        url="https://dynamodb.eu-west-1.amazonaws.com/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"},
    )
    with mock.patch("botocore.auth.get_current_datetime", return_value=NOW.replace(tzinfo=None)):
        SigV4Auth(credentials, "dynamodb", "eu-west-1").add_auth(request)
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-date"] == request.headers["X-Amz-Date"]
    assert ours.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


def test_a_host_on_another_port_is_signed_with_its_port(client):
    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("none"))
    sender = client.__dict__["_fast_sender"]
    assert sender.signer.host == dynamo.endpoint().host.split("//")[1]  # 127.0.0.1:<port>


def test_reads_and_writes_answer_as_botocore_does(client):
    table = CounterShard.Meta.table_name
    client.put_item(TableName=table, Item={**shard_key("w"), "count": {"N": "3"}, "tags": {"SS": ["a", "b"]}})

    for call in [
        ("GetItem", {"TableName": table, "Key": shard_key("w"), "ConsistentRead": True}),
        ("GetItem", {"TableName": table, "Key": shard_key("missing")}),
        ("Query", {"TableName": table, "KeyConditionExpression": "counter_key = :k",
                   "ExpressionAttributeValues": {":k": {"S": "w"}}, "ReturnConsumedCapacity": "TOTAL"}),
        ("BatchGetItem", {"RequestItems": {table: {"Keys": [shard_key("w"), shard_key("missing")]}}}),
    ]:  # fmt: skip
        operation, params = call
        assert without_metadata(client._make_api_call(operation, dict(params))) == without_metadata(
            botocore(client, operation, **params)
        )
    updated = client.update_item(
        TableName=table,
        Key=shard_key("w"),
        UpdateExpression="ADD #c :one",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    assert updated["Attributes"] == {"count": {"N": "4"}}
    assert updated["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert updated["ResponseMetadata"]["RequestId"]


def test_binary_values_go_and_come_back_as_bytes(client):
    table = UsageTally.Meta.table_name
    key = {"bucket": {"S": "slot#test"}, "part": {"S": "00#i"}}
    raw = bytes(range(256))
    client.put_item(TableName=table, Item={**key, "people": {"B": raw}, "start": {"N": "1"}})

    ours = client.get_item(TableName=table, Key=key, ConsistentRead=True)
    assert ours["Item"]["people"] == {"B": raw}
    assert without_metadata(ours) == without_metadata(
        botocore(client, "GetItem", TableName=table, Key=key, ConsistentRead=True)
    )


def test_a_failed_condition_raises_botocores_exception_with_the_item(client):
    table = CounterShard.Meta.table_name
    client.put_item(TableName=table, Item={**shard_key("c"), "count": {"N": "1"}})
    params = {
        "TableName": table,
        "Item": {**shard_key("c"), "count": {"N": "2"}},
        "ConditionExpression": "attribute_not_exists(counter_key)",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }

    with pytest.raises(client.exceptions.ConditionalCheckFailedException) as ours:
        client.put_item(**params)
    with pytest.raises(client.exceptions.ConditionalCheckFailedException) as theirs:
        botocore(client, "PutItem", **params)

    assert ours.value.response["Error"] == theirs.value.response["Error"]
    assert ours.value.response["Item"] == theirs.value.response["Item"] == {**shard_key("c"), "count": {"N": "1"}}
    assert ours.value.operation_name == "PutItem"


def test_a_cancelled_transaction_carries_its_reasons(client):
    table = CounterShard.Meta.table_name
    client.put_item(TableName=table, Item={**shard_key("t"), "count": {"N": "1"}})
    params = {
        "TransactItems": [
            {"Put": {"TableName": table, "Item": {**shard_key("t2"), "count": {"N": "1"}}}},
            {
                "ConditionCheck": {
                    "TableName": table,
                    "Key": shard_key("t"),
                    "ConditionExpression": "#c = :two",
                    "ExpressionAttributeNames": {"#c": "count"},
                    "ExpressionAttributeValues": {":two": {"N": "2"}},
                }
            },
        ]
    }

    with pytest.raises(client.exceptions.TransactionCanceledException) as ours:
        client.transact_write_items(**params)
    with pytest.raises(client.exceptions.TransactionCanceledException) as theirs:
        botocore(client, "TransactWriteItems", **params)

    assert ours.value.response["CancellationReasons"] == theirs.value.response["CancellationReasons"]
    assert [reason["Code"] for reason in ours.value.response["CancellationReasons"]] == [
        "None",
        "ConditionalCheckFailed",
    ]
    assert ours.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert "t2" not in str(client.scan(TableName=table)["Items"])


@pytest.fixture
def posted(monkeypatch):
    """(operation, body) of each request the fast path sends."""
    sent = []
    real_post = wire._Sender.post

    def recording(self, operation_name, body):
        sent.append((operation_name, body))
        return real_post(self, operation_name, body)

    monkeypatch.setattr(wire._Sender, "post", recording)
    return sent


def test_a_transaction_gets_botocores_idempotency_token(client, posted):
    table = CounterShard.Meta.table_name
    client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": shard_key("i")}}])
    [(operation, body)] = posted
    assert operation == "TransactWriteItems" and b'"ClientRequestToken":"' in body


def attempts_seen(client: Any) -> list[Any]:
    """Each attempt's outcome, as the usage and metrics hooks see it (response-received)."""
    seen: list[Any] = []
    client.meta.events.register(
        "response-received.dynamodb",
        lambda parsed_response=None, exception=None, **_: seen.append(exception or parsed_response.get("Error", "ok")),
    )
    return seen


def test_a_kept_connection_the_server_dropped_is_replaced(client):
    table = CounterShard.Meta.table_name
    client.put_item(TableName=table, Item={**shard_key("l"), "count": {"N": "7"}})
    seen = attempts_seen(client)
    idle = client.__dict__["_fast_sender"].connections._idle
    dropped = idle[-1][0]
    dropped.sock.shutdown(socket.SHUT_RDWR)  # the next call's connection, as if the server had closed it

    assert client.get_item(TableName=table, Key=shard_key("l"))["Item"]["count"] == {"N": "7"}
    assert seen == ["ok"]  # one attempt, sent again on another connection
    assert all(connection is not dropped for connection, _ in idle)


def test_a_connection_idle_too_long_is_not_used(client, monkeypatch):
    table = CounterShard.Meta.table_name
    client.get_item(TableName=table, Key=shard_key("x"))
    pool = client.__dict__["_fast_sender"].connections
    old = [connection for connection, _ in pool._idle]
    monkeypatch.setattr(pool, "IDLE_SECONDS", -1.0)  # every kept one is past it, however fine the clock

    client.get_item(TableName=table, Key=shard_key("x"))

    assert all(connection.sock is None for connection in old)  # closed
    assert not {id(connection) for connection, _ in pool._idle} & {id(connection) for connection in old}


def test_a_refused_connection_is_sent_again_by_botocore(client, monkeypatch, caplog):
    table = CounterShard.Meta.table_name
    client.put_item(TableName=table, Item={**shard_key("r"), "count": {"N": "3"}})
    seen = attempts_seen(client)

    def refused(self):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(wire._Connections, "take", refused)
    monkeypatch.setattr(wire, "_failure_logged_at", -wire.FAILURE_LOG_SECONDS)
    with caplog.at_level(logging.DEBUG, logger="project.dynamo.wire"):
        assert client.get_item(TableName=table, Key=shard_key("r"))["Item"]["count"] == {"N": "3"}
        client.get_item(TableName=table, Key=shard_key("r"))
    outcomes = [type(each).__name__ if isinstance(each, Exception) else each for each in seen]
    assert outcomes == ["ConnectionRefusedError", "ok"] * 2  # each call: the fast attempt, then botocore's
    levels = [record.levelname for record in caplog.records if "fast path failed" in record.getMessage()]
    assert levels == ["WARNING", "DEBUG"]  # once a minute, then quietly


def test_a_transaction_applied_whose_answer_is_lost_is_applied_once(client, monkeypatch):
    """botocore sends it again with the same ClientRequestToken, which DynamoDB honours."""
    table = CounterShard.Meta.table_name
    real_post = wire._Sender.post

    def applied_then_lost(self, operation_name, body):
        real_post(self, operation_name, body)
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(wire._Sender, "post", applied_then_lost)
    client.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": table,
                    "Key": shard_key("once"),
                    "UpdateExpression": "ADD #c :one",
                    "ExpressionAttributeNames": {"#c": "count"},
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            }
        ]
    )
    stored = botocore(client, "GetItem", TableName=table, Key=shard_key("once"), ConsistentRead=True)
    assert stored["Item"]["count"] == {"N": "1"}


def test_throttling_is_left_to_botocores_retries(client, monkeypatch):
    throttled = (
        400,
        {"content-type": "application/x-amz-json-1.0"},
        b'{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}',
    )
    monkeypatch.setattr(wire._Sender, "post", lambda self, operation_name, body: throttled)
    table = CounterShard.Meta.table_name
    seen = attempts_seen(client)

    client.put_item(TableName=table, Item={**shard_key("p"), "count": {"N": "1"}})

    assert seen[0]["Code"] == "ProvisionedThroughputExceededException" and seen[1:] == ["ok"]
    assert botocore(client, "GetItem", TableName=table, Key=shard_key("p"))["Item"]["count"] == {"N": "1"}


def test_an_answer_that_fails_its_checksum_is_asked_again(client, monkeypatch):
    real_post = wire._Sender.post

    def corrupted(self, operation_name, body):
        status, headers, data = real_post(self, operation_name, body)
        return status, {**headers, "x-amz-crc32": "1"}, data

    monkeypatch.setattr(wire._Sender, "post", corrupted)
    calls = []
    monkeypatch.setattr(wire, "_botocore_call", lambda *args: calls.append(args[1]) or {"fallback": True})

    assert client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x")) == {"fallback": True}
    assert calls == ["GetItem"]


def test_other_errors_are_botocores(client):
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.get_item(TableName="no_such_table", Key=shard_key("x"))
    with pytest.raises(ClientError, match="ValidationException"):
        client.get_item(TableName=CounterShard.Meta.table_name, Key={"counter_key": {"S": "no shard"}})


def test_the_control_plane_keeps_botocores_parsing(client, monkeypatch):
    """DescribeTable answers datetimes through botocore, as its callers expect; the fast path
    never sends it."""
    sent = []
    real_post = wire._Sender.post
    monkeypatch.setattr(wire._Sender, "post", lambda self, name, body: sent.append(name) or real_post(self, name, body))

    table = client.describe_table(TableName=CounterShard.Meta.table_name)["Table"]
    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))

    assert isinstance(table["CreationDateTime"], datetime.datetime)
    assert sent == ["GetItem"]


def test_the_fast_path_says_who_calls(client, monkeypatch):
    """Its requests carry botocore's User-Agent and its own mark (AWS's logs tell them apart)."""
    sent = []
    real_headers = wire._Signer.headers
    monkeypatch.setattr(wire._Signer, "headers", lambda self, *args: sent.append(real_headers(self, *args)) or sent[-1])
    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))
    [headers] = sent
    assert headers["user-agent"].startswith("Botocore/") and headers["user-agent"].endswith(" dynamo-social-fast")
    assert "user-agent" not in headers["authorization"]  # not signed, as botocore does not sign it


def test_only_dynamodb_clients_take_the_fast_path(client):
    from botocore.session import get_session

    sts = get_session().create_client("sts", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    assert type(client)._make_api_call is wire._dynamodb_make_api_call
    assert type(sts)._make_api_call is wire._botocore_call


def test_turned_off_every_call_is_botocores(client, settings):
    settings.DYNAMODB_FAST_CALLS = False
    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))
    assert client.__dict__["_fast_sender"] is None


def test_other_services_are_botocores():
    from botocore.session import get_session

    sts = get_session().create_client("sts", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    assert wire._sender_make(sts) is None


def test_a_stubbed_client_is_answered_by_its_stubs(client):
    from botocore.stub import Stubber

    with Stubber(client) as stub:
        stub.add_response("get_item", {"Item": {"k": {"S": "stubbed"}}}, {"TableName": "t", "Key": {"k": {"S": "x"}}})
        assert client.get_item(TableName="t", Key={"k": {"S": "x"}})["Item"] == {"k": {"S": "stubbed"}}
    assert "Item" not in client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))


def test_a_before_send_handler_sees_the_request(client):
    sent = []
    client.meta.events.register("before-send.dynamodb.GetItem", lambda request, **_: sent.append(request.url))
    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))
    assert len(sent) == 1


def test_the_models_calls_take_the_fast_path(posted):
    CounterShard("like#fast", 1, count=2).save()
    assert CounterShard.get("like#fast", 1).count == 2
    assert [operation for operation, _ in posted] == ["PutItem", "GetItem"]


def test_a_forked_process_opens_connections_of_its_own(client):
    import multiprocessing

    client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))
    pool = client.__dict__["_fast_sender"].connections
    assert pool._idle  # kept by this process
    inherited = {id(connection) for connection, _ in pool._idle}

    def child(answers):
        answers.put([id(connection) for connection, _ in pool._idle])
        answers.put("Item" in client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x")))
        answers.put([id(connection) in inherited for connection, _ in pool._idle])

    answers = multiprocessing.get_context("fork").Queue()
    process = multiprocessing.get_context("fork").Process(target=child, args=(answers,))
    process.start()
    process.join(timeout=WAIT_SECONDS)
    assert process.exitcode == 0
    assert answers.get(timeout=WAIT_SECONDS) == []  # nothing of the parent's kept
    assert answers.get(timeout=WAIT_SECONDS) is False  # the call answered, on a connection of its own
    assert answers.get(timeout=WAIT_SECONDS) == [False]
    kept = pool._idle[-1][0]
    assert "Item" not in client.get_item(TableName=CounterShard.Meta.table_name, Key=shard_key("x"))
    assert pool._idle[-1][0] is kept  # the child closed its copy only: this process's still answers


class _StandIn(http.server.BaseHTTPRequestHandler):
    """DynamoDB over HTTPS, as far as one GetItem goes: records what it was sent."""

    received: ClassVar[list[dict[str, str]]] = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append({name.lower(): value for name, value in self.headers.items()})
        body = b'{"Item":{"k":{"S":"over tls"}}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def tls_endpoint(tmp_path):
    """An HTTPS stand-in with a certificate for `localhost` from a test authority; its CA file."""
    import trustme

    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("localhost").configure_cert(context)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    _StandIn.received = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    yield f"https://localhost:{server.server_address[1]}", str(ca_file)
    server.shutdown()
    server.server_close()


def tls_client(url: str, verify: str) -> Any:
    return dynamo.connection().session.create_client(
        "dynamodb", region_name="eu-west-1", endpoint_url=url, verify=verify,
        aws_access_key_id="AKID", aws_secret_access_key="secret", aws_session_token="token",
    )  # fmt: skip


def test_over_https_the_fast_path_verifies_the_server_and_signs_its_host(tls_endpoint):
    url, ca_file = tls_endpoint
    client = tls_client(url, ca_file)

    assert client.get_item(TableName="t", Key={"k": {"S": "x"}})["Item"] == {"k": {"S": "over tls"}}

    assert client.__dict__["_fast_sender"].connections.tls
    [sent] = _StandIn.received  # one attempt, the fast path's
    assert sent["host"] == url.removeprefix("https://")
    assert sent["x-amz-target"] == "DynamoDB_20120810.GetItem"
    assert sent["x-amz-security-token"] == "token"
    assert sent["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKID/")
    assert "/eu-west-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;" in sent["authorization"]


def test_over_https_a_server_the_authorities_do_not_vouch_for_is_refused(tls_endpoint):
    from botocore.exceptions import SSLError

    url, _ = tls_endpoint
    client = tls_client(url, True)  # the usual authorities: not the test's

    with pytest.raises(SSLError):
        client.get_item(TableName="t", Key={"k": {"S": "x"}})
    assert _StandIn.received == []  # nothing sent to it, by either path
