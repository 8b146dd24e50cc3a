"""The IAM managed policies of deploy/aws/iam.yaml: what each process may call.

Three roles, each with its managed policies (`WebPolicy`, and `WebPolicy2`... once a role's
statements outgrow IAM's 6,144 characters: `policy_documents` splits them by table), attached
to the task (or instance) role that runs it:

- **web**: gunicorn (pages, APIs, admin pages, /readyz, /metrics) and what it does once an
  answer is sent (the like fold of `LIKE_FOLD_AFTER_RESPONSE`), the export of a person's data
  (`GET /api/me/export/`: every app's export sections): data-plane actions on the
  tables it reads and writes, plus the describe calls of /readyz and the admin Tables and
  Activity pages. No CreateTable: a month's activity table is made ahead by the workers
  (`rollup_activity`); a web process that finds it missing logs the failed create and the
  action goes on without its log line (social/activity/services.py).
- **workers**: the seven polling commands (`fold_like_events`, `aggregate_counters`,
  `process_feed_retries`, `dispatch_deliveries`, `rollup_activity`, `mail_notifications`,
  `erase_accounts`: every program of deploy/supervisord.conf but gunicorn) and their heartbeats
  (`clear_sessions`, beside them under supervisord, touches the relational database only).
  `rollup_activity --loop` keeps the activity tables in shape every hour, as
  `activity_tables` does, so it holds the monthly tables' life cycle too.
- **operators**: the commands run by hand or by a deploy step: `create_tables` (with
  `--check` and `--drop-undeclared`), `activity_tables`, `health`, `counter_shards`,
  `login_unlock`, `createsuperuser` (its sign-up writes an activity line). Table changes
  only: no DeleteTable on the tables the models declare (nothing deletes them), DeleteTable
  on the monthly activity tables (dropped once exported).

How the lists were derived: every PynamoDB call (`get`, `batch_get`, `query`, `scan`,
`save`, `update`, `delete`, `batch_write`, a `TransactWrite`'s actions) and every raw client
call (`client().query`, `update_table`, ...) of the code each process runs, read from the
code, and checked against a recording of every DynamoDB call the test suite made, with
the process (command or request) that made it. IAM authorizes a TransactWriteItems
action by action (PutItem, UpdateItem, DeleteItem, ConditionCheckItem), so transactions
appear under those names. Every declared table gets the operators' `create_tables`
actions and the web's describe calls from the models (`EVERY_TABLE`); its data-plane
actions must be given in `ACCESS` for each role that reads or writes it: the generator
refuses a model that no process reads or writes, and a row for a table no model declares.
The account eraser's steps and the export's sections, which every app extends with its own
tables, are checked on every run of the suite: tests/project/test_cloudformation.py records
each request `erase_accounts` and `GET /api/me/export/` make (action, table, index) and
checks it against the policies of the role that runs them.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A Query of a table's indexes (`table/<name>/index/*`), not of the table itself.
INDEX_QUERY = "Query an index"
# The monthly activity tables (social/activity/models.py: `activity_` + YYYYMM); `?` is one character in IAM.
ACTIVITY_MONTHS = "activity_??????"
# What the activity tables' life cycle calls (social/activity/month_tables.py, archive.py,
# rotation.py): create with PITR and deletion protection on AWS (project/dynamo/schema/protection.py),
# cool to the infrequent-access class, export (files: Query by_day; S3: DynamoDB's export,
# PITR on first), take the protection off and drop.
ACTIVITY_LIFE_CYCLE = (
    "CreateTable",
    "DescribeTable",
    "UpdateTable",
    "DeleteTable",
    "DescribeContinuousBackups",
    "UpdateContinuousBackups",
    "ExportTableToPointInTime",
    INDEX_QUERY,
)
# /readyz (project/operations/health.py) and the admin Tables page (`tables_check`) describe every table.
DESCRIBE = ("DescribeTable", "DescribeTimeToLive", "DescribeContinuousBackups")
# `create_tables`: create, add GSIs (UpdateTable), TTL, PITR and deletion protection (UpdateTable).
CREATE_TABLES = (*DESCRIBE, "CreateTable", "UpdateTable", "UpdateTimeToLive", "UpdateContinuousBackups")

ACCESS: dict[str, dict[str, tuple[str, ...]]] = {
    "web": {
        # Comments: a post is a transactional Put; edit, delete, hide and a like counter's
        # shard count are UpdateItems; pages read by key, BatchGetItem and the timeline,
        # replies, author and profile indexes.
        "comments": ("GetItem", "BatchGetItem", INDEX_QUERY, "PutItem", "UpdateItem"),
        # Earlier bodies of edited comments: an edit's transactional Put; staff's pages (Query);
        # deleted with the text by the author's or staff's delete (Query, BatchWriteItem).
        "comment_versions": ("Query", "PutItem", "BatchWriteItem"),
        "timeline_days": ("GetItem", "Query", "PutItem"),
        # A like is a transactional Put (an unlike a Delete); pages ask BatchGetItem "liked?";
        # the export lists a person's likes (the by_user index).
        "likes": ("BatchGetItem", INDEX_QUERY, "PutItem", "DeleteItem"),
        # A reaction is a transactional Put (its undo a Delete); pages ask BatchGetItem for the
        # viewer's own; the export lists a person's reactions (the by_user index).
        "reactions": ("BatchGetItem", INDEX_QUERY, "PutItem", "DeleteItem"),
        # Counter shards: a like's transactional Update, a view's UpdateItem, the fold's
        # compaction (Delete + Update), the exact value a Query.
        "counters": ("Query", "UpdateItem", "DeleteItem"),
        # Due flags and shard-count overrides (UpdateItem, GetItem), the ranking index.
        "counter_totals": ("GetItem", INDEX_QUERY, "UpdateItem"),
        # The like fold after an answer, mark-read transactions, the inbox (LSI by_num_likes),
        # the export (a Query of the person's partition).
        "like_unread": ("GetItem", "BatchGetItem", "Query", INDEX_QUERY, "PutItem", "UpdateItem"),
        "like_read": ("Query", "PutItem"),
        "unread_counts": ("GetItem", "BatchGetItem", INDEX_QUERY, "UpdateItem"),
        "like_events": ("Query", "PutItem", "BatchWriteItem"),
        "like_notified": ("BatchGetItem", "BatchWriteItem"),
        # Feed writes are version-conditioned Puts in a transaction (replies, log-in notices).
        "feed": ("GetItem", "PutItem"),
        # The reply's outbox (transactional Put), its deletion once applied, a failed write queued.
        "feed_retry": ("PutItem", "UpdateItem", "DeleteItem"),
        # Staff create, prepare (admin), cancel and list deliveries; an account deletion
        # drops the person's pending targets (Query + transactional Delete, chunk Update).
        "deliveries": ("GetItem", "BatchGetItem", INDEX_QUERY, "PutItem", "UpdateItem"),
        "delivery_chunks": ("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "ConditionCheckItem"),
        "delivery_targets": ("BatchGetItem", "Query", "PutItem", "DeleteItem"),
        # Queued with its delivery, dequeued by a cancel; the staff list reads it (Query) for
        # unfinished deliveries the by_created index does not list yet.
        "delivery_queue": ("Query", "PutItem", "DeleteItem"),
        # Write limits, throttles, log-in limits, view marks; Idempotency-Key claims.
        "limits": ("GetItem", "PutItem", "UpdateItem", "DeleteItem"),
        "idempotency": ("GetItem", "PutItem", "UpdateItem", "DeleteItem"),
        # The admin System page and /metrics read the heartbeats.
        "worker_heartbeats": ("Query",),
        # The live change log (social/live.py): writes signal what changed (PutItem; the like
        # fold in the request that deletes its events, BatchWriteItem); the live poll reads the
        # last seconds back (Query).
        "live_changes": ("Query", "PutItem", "BatchWriteItem"),
        # Each process's usage tallies (project/operations/usage.py: a put a minute per bucket); the admin
        # System page reads the last hour and day (Query).
        "usage": ("Query", "PutItem"),
        # Notification mail scheduled in a feed write's transaction (a reply, the like fold after
        # an answer); the staff ledger page reads a person's lines and a delivery's (by_source).
        "mail_queue": ("PutItem",),
        "sends": ("Query", INDEX_QUERY),
        # Web Push: a person's browsers (Query), subscribing (PutItem), removing one and the
        # session's at log-out (conditional DeleteItem).
        "push_subscriptions": ("Query", "PutItem", "DeleteItem"),
        # Presence: the live poll puts when the person's page last polled (notifications/presence.py).
        "presence": ("PutItem",),
        # Preferences: the settings page and API (GetItem, UpdateItem), a reply's fan-out
        # (BatchGetItem), account deletion (DeleteItem).
        "preferences": ("GetItem", "BatchGetItem", "UpdateItem", "DeleteItem"),
        # Mute and watch (Put, conditional Delete), a reply's watchers (Query) and watch
        # (conditional Put), the settings lists (by_user index, then BatchGetItem).
        "thread_subscriptions": (
            "GetItem",
            "BatchGetItem",
            "Query",
            INDEX_QUERY,
            "PutItem",
            "DeleteItem",
            "BatchWriteItem",
        ),
        # Reports: a report is a transactional Put (its case a transactional Update, with the
        # comment's hide at the threshold); the reporter's own report (GetItem); the staff's
        # queue (the open_newest / open_most indexes, then BatchGetItem), a case's reports
        # (Query) and decisions (UpdateItem); the export's reports a person filed (by_reporter).
        "reports": ("GetItem", "Query", INDEX_QUERY, "PutItem"),
        # Blocks and mutes: a pair and a person's list (Query: a pair is read as a Query of its
        # key, so no GetItem), a block (transactional Update), an unblock (transactional Delete
        # or Update).
        "blocks": ("Query", "UpdateItem", "DeleteItem"),
        "report_cases": ("GetItem", "BatchGetItem", INDEX_QUERY, "UpdateItem"),
        # Log lines (in a transaction, PutItem, BatchWriteItem), /me/activity and the export
        # (Query), the month's table looked up before its first write and on the admin Activity page.
        ACTIVITY_MONTHS: ("DescribeTable", "Query", "PutItem", "BatchWriteItem"),
    },
    "workers": {
        # erase_accounts runs every app's eraser steps (project/identity/erasure.py: social, actions,
        # notifications, delivery) beside the fold's and the dispatcher's own calls: it finds a
        # person's items by their partition (Query) or their by_user, author, by_reporter
        # indexes, and deletes them (DeleteItem, BatchWriteItem) or empties them (UpdateItem).
        # Every worker: its heartbeat (Put), deleted on a clean stop.
        "worker_heartbeats": ("PutItem", "DeleteItem"),
        # The fold (with its events' delete, BatchWriteItem), the feed retries and the
        # dispatcher signal open pages (social/live.py).
        "live_changes": ("PutItem", "BatchWriteItem"),
        # Every worker: its usage tallies (a put a minute per bucket).
        "usage": ("PutItem",),
        # mail_notifications: due mails (LSI by_due), claimed (UpdateItem), deleted once
        # handled; put by feed writes, the fold and the dispatcher (transactional Put). The
        # ledger: a line claimed (conditional Put), marked (UpdateItem), taken back (Delete);
        # the mail limits (conditional UpdateItem, GetItem on a refusal). The eraser: a person's
        # queued mails (a Query of their shard) and ledger lines (their partition), batch-deleted;
        # their write limits' current windows (DeleteItem).
        "mail_queue": ("Query", INDEX_QUERY, "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"),
        "sends": ("GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"),
        # send_push: a person's browsers (Query), `last_used_at` (UpdateItem), a gone one (DeleteItem);
        # the eraser's batch deletes.
        "push_subscriptions": ("Query", "UpdateItem", "DeleteItem", "BatchWriteItem"),
        # send_push and mail_notifications: whether the person is present (GetItem); the eraser (Query, batch delete).
        "presence": ("GetItem", "Query", "BatchWriteItem"),
        "limits": ("GetItem", "UpdateItem", "DeleteItem"),
        # fold_like_events: a Scan page of pending events, each comment's events (Query),
        # deleted in batches; like rows, markers, the notification, the badge, the comment
        # (hidden meanwhile?), the counter's due flag and its compaction.
        # A block's trigger events (PutItem: the fold after a commit, a drained retraction).
        "like_events": ("Scan", "Query", "PutItem", "BatchWriteItem"),
        # The eraser's likes step: a person's likes (the by_user index), each undone as an unlike
        # (a transactional Delete), its marker deleted.
        "likes": ("BatchGetItem", INDEX_QUERY, "DeleteItem"),
        # The eraser's reactions step: a person's reactions (by_user), each undone (a transactional Delete).
        "reactions": (INDEX_QUERY, "DeleteItem"),
        "like_notified": ("BatchGetItem", "DeleteItem", "BatchWriteItem"),
        # The unread ones listing a blocked person (a drained retraction: the by_num_likes LSI);
        # the eraser's notifications step: a person's partition, batch-deleted (and so like_read's,
        # unread_counts').
        "like_unread": ("GetItem", "BatchGetItem", "Query", INDEX_QUERY, "PutItem", "UpdateItem", "BatchWriteItem"),
        "like_read": ("Query", "BatchWriteItem"),
        # Blocks and mutes read by the fold, a drained retraction and the mail sender; a
        # person's own, batch-deleted by the eraser.
        "blocks": ("Query", "BatchWriteItem"),
        # The fold's comment (hidden meanwhile?); a fan-out's comment, parent and thread root.
        # The eraser's comments step: a person's (the author index), each emptied (UpdateItem)
        # and taken out of the listings unless a reply hangs under it (the replies index).
        "comments": ("GetItem", "BatchGetItem", INDEX_QUERY, "UpdateItem"),
        # The eraser's comments step deletes each comment's earlier bodies (Query, BatchWriteItem).
        "comment_versions": ("Query", "BatchWriteItem"),
        "counters": ("Query", "UpdateItem", "DeleteItem"),
        # aggregate_counters: the due index (Query), claims and totals (UpdateItem).
        "counter_totals": ("GetItem", INDEX_QUERY, "UpdateItem"),
        # Badges: the fold's UpdateItem, feed writes' transactional Update.
        "unread_counts": ("GetItem", "BatchGetItem", "Query", "UpdateItem", "BatchWriteItem"),
        # process_feed_retries: due retries (LSI by_due), claimed (UpdateItem), deleted once
        # applied; a person's (a Query of their shard), batch-deleted by the eraser.
        "feed_retry": ("Query", INDEX_QUERY, "UpdateItem", "DeleteItem", "BatchWriteItem"),
        # Feed writes (retries, delivered messages: BatchGetItem of a batch's feeds); a person's
        # feed deleted by the eraser.
        "feed": ("GetItem", "BatchGetItem", "PutItem", "DeleteItem"),
        # dispatch_deliveries: prepare (chunks, targets), lease, deliver, finish, backlog.
        "deliveries": ("GetItem", "BatchGetItem", "UpdateItem", "ConditionCheckItem"),
        "delivery_chunks": ("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "ConditionCheckItem"),
        # The eraser drops a person's pending targets (Query, then per target a transactional
        # Delete with its chunk's Update).
        "delivery_targets": ("BatchGetItem", "Query", "PutItem", "DeleteItem"),
        "delivery_queue": ("Query", "DeleteItem"),
        # Preferences read per batch (the fold, the feed retries, dispatch), by the mail
        # sender at send time, and the digest's readers (the sparse digest index); deleted by
        # the eraser.
        "preferences": ("GetItem", "BatchGetItem", INDEX_QUERY, "DeleteItem"),
        # Muted threads (the fold), watchers of a thread (a retried reply's fan-out); a
        # person's thread states (the by_user index), batch-deleted by the eraser.
        "thread_subscriptions": ("GetItem", "BatchGetItem", "Query", INDEX_QUERY, "PutItem", "BatchWriteItem"),
        # The eraser's reports step: the reports a person filed (by_reporter), batch-deleted.
        "reports": (INDEX_QUERY, "BatchWriteItem"),
        # rollup_activity (by_day Query, and the hourly life cycle); the fold's and the
        # dispatcher's log lines (BatchWriteItem); a person's lines of each month (a Query of
        # their partition), batch-deleted by the eraser.
        ACTIVITY_MONTHS: (*ACTIVITY_LIFE_CYCLE, "Query", "BatchWriteItem"),
    },
    # Beside create_tables' actions on every declared table (`EVERY_TABLE` below):
    "operators": {
        # counter_shards: a comment's like shard count, a counter's override (and the
        # --copy-like-overrides Scan), the counter's value; profile_index_backfill's Scan of
        # comments and its UpdateItems.
        "comments": ("GetItem", "UpdateItem", "Scan"),
        "counters": ("Query",),
        "counter_totals": ("GetItem", "UpdateItem", "Scan"),
        # login_unlock deletes a lock.
        "limits": ("DeleteItem",),
        # health reads the heartbeats.
        "worker_heartbeats": ("Query",),
        # activity_tables; createsuperuser's sign-up line (PutItem).
        ACTIVITY_MONTHS: (*ACTIVITY_LIFE_CYCLE, "PutItem"),
    },
}
# On every table the models declare, whatever it holds: /readyz and the admin Tables page
# (web) describe them; create_tables (operators) creates and checks them.
EVERY_TABLE = {"web": DESCRIBE, "workers": (), "operators": CREATE_TABLES}
# Account-wide actions (no table in their resource): ListTables (/readyz, the admin
# Activity page, the activity life cycle), ListExports (the life cycle's export to S3).
ACCOUNT_WIDE = {
    "web": ("ListTables",),
    "workers": ("ListTables", "ListExports"),
    "operators": ("ListTables", "ListExports"),
}
DESCRIPTIONS = {
    "web": "Dynamo Social web process (gunicorn): data-plane actions on its tables and indexes, describe calls "
    "of /readyz and the admin pages. Generated by python manage.py cloudformation (project/deploy/iam.py).",
    "workers": "Dynamo Social workers (fold_like_events, aggregate_counters, process_feed_retries, "
    "dispatch_deliveries, rollup_activity, mail_notifications, erase_accounts): their tables, and the monthly activity "
    "tables' life cycle. "
    "Generated by python manage.py cloudformation (project/deploy/iam.py).",
    "operators": "Dynamo Social operators' commands (create_tables, activity_tables, health, counter_shards, "
    "login_unlock, profile_index_backfill): table creation and checks, the monthly activity tables. "
    "Generated by python manage.py cloudformation (project/deploy/iam.py).",
}
# Roles whose policy says `dynamodb:Describe*` for DESCRIBE (`_table_statements` says why).
DESCRIBE_WILDCARD = ("web",)
# Roles whose activity life cycle exports a month to S3 (ACTIVITY_EXPORT_S3_BUCKET).
EXPORTERS = ("workers", "operators")
# The longest `TablePrefix` the stacks take (their parameter's MaxLength).
PREFIX_MAX_LENGTH = 24
# IAM takes 6,144 characters a managed policy (whitespace not counted). A role's statements
# are split into as many policies as they need, each kept 512 under it: room for a longer
# partition, region or export prefix than WORST_CASE names, without a policy that fails to deploy.
MANAGED_POLICY_MAX = 6144
POLICY_BUDGET = MANAGED_POLICY_MAX - 512
# IAM's default quota of managed policies attached to one role (a role running the web
# process and the workers together carries both roles' parts).
ROLE_POLICIES_MAX = 10
# The longest value each of the template's substitutions can take, for `policy_size`.
WORST_CASE = {
    "AWS::Partition": "aws-us-gov",
    "AWS::Region": "ap-southeast-5",
    "AWS::AccountId": "123456789012",
    "TablePrefix": "p" * PREFIX_MAX_LENGTH,
    "ActivityExportBucket": "b" * 63,
    "ActivityExportPrefix": "activity/",
}


def _arn(path: str) -> dict[str, str]:
    return {"Fn::Sub": f"arn:${{AWS::Partition}}:dynamodb:${{AWS::Region}}:${{AWS::AccountId}}:table/{path}"}


def _table(logical_name: str) -> str:
    return f"${{TablePrefix}}{logical_name}"


def role_access(role: str, tables: list[str]) -> dict[str, set[str]]:
    """`{resource path under table/: {actions}}` of `role` over the declared `tables`."""
    unknown = sorted(set(ACCESS[role]) - set(tables) - {ACTIVITY_MONTHS})
    if unknown:
        raise ValueError(f"ACCESS[{role!r}] in project/deploy/iam.py names tables no model declares: {unknown}")
    unused = sorted(set(tables) - set(ACCESS["web"]) - set(ACCESS["workers"]))
    if unused:
        raise ValueError(
            f"no process reads or writes table(s) {unused}: give each its actions in ACCESS "
            "(project/deploy/iam.py), then run python manage.py cloudformation"
        )
    by_resource: dict[str, set[str]] = {}
    for table in [*tables, ACTIVITY_MONTHS]:
        actions = (*ACCESS[role].get(table, ()), *(EVERY_TABLE[role] if table != ACTIVITY_MONTHS else ()))
        for action in actions:
            if action == INDEX_QUERY:
                by_resource.setdefault(f"{_table(table)}/index/*", set()).add("Query")
            else:
                by_resource.setdefault(_table(table), set()).add(action)
        if "ExportTableToPointInTime" in actions:
            # DescribeExport names the export (ListExports, account-wide, finds it).
            by_resource.setdefault(f"{_table(table)}/export/*", set()).add("DescribeExport")
    return by_resource


def _table_of(resource: str) -> str:
    """The table a resource path names (`<table>`, `<table>/index/*`, `<table>/export/*`)."""
    return resource.split("/", 1)[0]


def _table_statements(role: str, access: dict[str, set[str]]) -> list[dict[str, Any]]:
    """One statement per set of actions, over every resource of `access` that takes exactly that set."""
    by_actions: dict[tuple[str, ...], list[str]] = {}
    for resource, allowed in access.items():
        by_actions.setdefault(tuple(sorted(allowed)), []).append(resource)
    statements: list[dict[str, Any]] = []
    for actions, resources in sorted(by_actions.items(), key=lambda pair: sorted(pair[1])):
        named = [f"dynamodb:{action}" for action in actions]
        if role in DESCRIBE_WILDCARD and set(DESCRIBE) <= set(actions):
            # The web's policy names every table with its describe calls beside its data calls:
            # `Describe*` (read-only metadata of those tables only) saves the three names in
            # each of its ~20 statements.
            named = ["dynamodb:Describe*", *(name for name in named if name.removeprefix("dynamodb:") not in DESCRIBE)]
        statements.append(
            {
                "Effect": "Allow",
                "Action": named,
                "Resource": [_arn(resource) for resource in sorted(resources)],
            }
        )
    return statements


def _role_wide_statements(role: str) -> list[Any]:
    """What takes no table of the project: ListTables and ListExports, the S3 export's files."""
    statements: list[Any] = [
        {"Effect": "Allow", "Action": [f"dynamodb:{a}" for a in ACCOUNT_WIDE[role]], "Resource": "*"}
    ]
    if role in EXPORTERS:
        # DynamoDB's export writes the month's files under ACTIVITY_EXPORT_S3_PREFIX as the caller.
        statements.append(
            {
                "Fn::If": [
                    "HasActivityExportBucket",
                    {
                        "Effect": "Allow",
                        "Action": ["s3:AbortMultipartUpload", "s3:PutObject", "s3:PutObjectAcl"],
                        "Resource": {
                            "Fn::Sub": "arn:${AWS::Partition}:s3:::${ActivityExportBucket}/${ActivityExportPrefix}*"
                        },
                    },
                    {"Ref": "AWS::NoValue"},
                ]
            }
        )
    return statements


def _worst_case(value: Any) -> Any:
    """A document as IAM would store it with the longest names the stack can be given."""
    if isinstance(value, dict):
        if "Fn::Sub" in value:
            text = value["Fn::Sub"]
            for name, filled in WORST_CASE.items():
                text = text.replace(f"${{{name}}}", filled)
            return text
        if "Fn::If" in value:
            return _worst_case(value["Fn::If"][1])
        return {key: _worst_case(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_worst_case(item) for item in value]
    return value


def policy_size(document: dict[str, Any]) -> int:
    """The characters IAM counts in `document` (whitespace is not counted), at its worst case."""
    return len(re.sub(r"\s", "", json.dumps(_worst_case(document))))


def _document(statements: list[Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": statements}


def policy_documents(role: str, tables: list[str]) -> list[dict[str, Any]]:
    """The policies of `role`, as many as its statements need, each within POLICY_BUDGET.

    The role's tables, in name order, fill the first policy (which also holds the role-wide
    statements) until the next table would take it past POLICY_BUDGET, then the next one,
    and so on: the same code makes the same split, a table's grants are never divided
    between two policies, and no grant widens to fit (least privilege stays as it is).
    """
    access = role_access(role, tables)
    by_table: dict[str, dict[str, set[str]]] = {}
    for resource, allowed in access.items():
        by_table.setdefault(_table_of(resource), {})[resource] = allowed
    parts: list[list[Any]] = []
    held: dict[str, set[str]] = {}
    head = _role_wide_statements(role)

    def statements(grants: dict[str, set[str]]) -> list[Any]:
        return [*(head if not parts else []), *_table_statements(role, grants)]

    for table in sorted(by_table):
        widened = {**held, **by_table[table]}
        if policy_size(_document(statements(widened))) <= POLICY_BUDGET:
            held = widened
            continue
        if not held:
            raise ValueError(f"{role}: the grants on {table} alone exceed one policy ({POLICY_BUDGET} characters)")
        parts.append(statements(held))
        held = dict(by_table[table])
    parts.append(statements(held))
    if len(parts) > ROLE_POLICIES_MAX:
        raise ValueError(f"{role}: {len(parts)} managed policies, more than a role may attach ({ROLE_POLICIES_MAX})")
    return [_document(part) for part in parts]


def policy_logical_id(role: str, part: int) -> str:
    """`WebPolicy`, `WebPolicy2`, ...: the first part keeps the name the single policy had."""
    return f"{role.capitalize()}Policy{part if part > 1 else ''}"


def policy_resources(tables: list[str]) -> dict[str, Any]:
    """Every role's AWS::IAM::ManagedPolicy resources, by logical id."""
    resources: dict[str, Any] = {}
    for role in ACCESS:
        documents = policy_documents(role, tables)
        for part, document in enumerate(documents, start=1):
            of = f" Part {part} of {len(documents)}: attach every part to the role." if len(documents) > 1 else ""
            resources[policy_logical_id(role, part)] = {
                "Type": "AWS::IAM::ManagedPolicy",
                "Properties": {"Description": DESCRIPTIONS[role] + of, "PolicyDocument": document},
            }
    return resources
