"""Tables of the `project` room: the polling workers' heartbeats (docs/how-to/operate.md), the
shared limit store (project/limits/store.py), the answers of create requests kept for their
Idempotency-Key (project/http/idempotency.py) and each process's DynamoDB usage per route
(project/operations/usage.py)."""

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    JSONAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
)
from pynamodb.models import Model

from project.dynamo.clients import table_meta

# A heartbeat no process renewed for this long is dropped from every answer (and by TTL):
# a host that died or was scaled away is reported stale for an hour, then forgotten.
HEARTBEAT_KEPT_SECONDS = 3600


class WorkerHeartbeat(Model):
    """The last sign of life of one worker process: one item per worker name and process.

    Written at most every WORKER_HEARTBEAT_SECONDS by the process itself (a put of about
    300 bytes: 1 WCU); deleted when the process stops cleanly.
    """

    Meta = table_meta("worker_heartbeats")

    worker = UnicodeAttribute(hash_key=True)  # the command: fold_like_events, dispatch_deliveries...
    instance = UnicodeAttribute(range_key=True)  # <host>:<pid>
    host = UnicodeAttribute()
    pid = NumberAttribute()
    started_at = NumberAttribute()  # epoch seconds, when the process started its loop
    beat_at = NumberAttribute()  # when this heartbeat was written
    cycle_at = NumberAttribute(null=True)  # when the last complete pass ended
    cycle_seconds = NumberAttribute(null=True)  # how long that pass took
    backlog_label = UnicodeAttribute(default="")  # what the backlog counts ("pending like events")
    backlog = NumberAttribute(null=True)  # None: not measured (the measurement failed)
    backlog_capped = BooleanAttribute(default=False)  # counting stopped at a cap: at least `backlog`
    lag_seconds = NumberAttribute(null=True)  # age of the oldest pending item, when measurable
    expires_at = TTLAttribute()


class LimitCounter(Model):
    """One limit's counts for one subject in one window of the limit's longest rule.

    The key `<name>#<subject>#<window start>` is new every window, so the counts of a
    window are never read again once it is over and TTL deletes them. A limit of up to
    three rules ("10/min,100/day") keeps its shorter windows in the same item (`start1`,
    `count1`, ...): one conditional UpdateItem checks and counts every rule at once.
    The same table holds once-per-window marks (`once#...`, a conditional put) and an
    account's failed log-ins of the day (`count`, and from how many networks: `addresses`).
    """

    Meta = table_meta("limits")

    key = UnicodeAttribute(hash_key=True)
    # Hits in the longest rule's window (the key's). The name shadows Model.count(), never called here.
    count = NumberAttribute(null=True)  # type: ignore[assignment]
    start1 = NumberAttribute(null=True)  # start of the current window of the shortest rule
    count1 = NumberAttribute(null=True)
    start2 = NumberAttribute(null=True)
    count2 = NumberAttribute(null=True)
    addresses = NumberAttribute(null=True)  # an account's failed log-ins of a day: from this many networks
    expires_at = TTLAttribute(null=True)


class IdempotencyRecord(Model):
    """One `Idempotency-Key` of one user (project/http/idempotency.py).

    Put with "no item yet" by the request that claims the key (`state` pending, `owner`
    its random token); that request then stores its answer (`state` done, `status`,
    `response`) on condition it still owns the claim. TTL deletes it after
    IDEMPOTENCY_TTL_SECONDS; until then a read treats an expired one as gone.
    """

    Meta = table_meta("idempotency")

    key = UnicodeAttribute(hash_key=True)  # "<user id>#<Idempotency-Key>"
    fingerprint = UnicodeAttribute()  # of the request: method, path, body
    owner = UnicodeAttribute()  # the claiming request's token
    state = UnicodeAttribute()  # "pending" or "done"
    claimed_ms = NumberAttribute()
    status = NumberAttribute(null=True)
    response = UnicodeAttribute(null=True)  # the answer's JSON body
    expires_at = TTLAttribute()


class UsageTally(Model):
    """One process's requests and DynamoDB units per route in one time bucket (project/operations/usage.py).

    Two kinds share the table: five-minute slots (`bucket` "slot#<yyyymmddhh>", `part`
    "<mm>#<instance>": the admin System page's last hour) and hours (`bucket`
    "hour#<yyyymmdd>", `part` "<hh>#<instance>": its last day). A page reads either window
    with two Queries (the previous and the current hour or day, from the window's first part).
    Only the process named in `part` writes the item: it puts its running totals of the
    bucket again (an overwrite) at most every USAGE_FLUSH_SECONDS.
    """

    Meta = table_meta("usage")

    bucket = UnicodeAttribute(hash_key=True)
    part = UnicodeAttribute(range_key=True)
    start = NumberAttribute()  # epoch seconds, the bucket's start
    routes = JSONAttribute()  # {route: [requests, read units, write units]}
    people = BinaryAttribute(legacy_encoding=False, null=True)  # a HyperLogLog of the signed-in people seen
    written_at = NumberAttribute()
    expires_at = TTLAttribute()
