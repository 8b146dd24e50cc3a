"""The IAM managed policies of deploy/aws/iam.yaml: what each process may call.

Three roles, one policy each, attached to the task (or instance) role that runs it:

- **web**: gunicorn (pages, APIs, admin pages, /readyz, /metrics) and what it does once an
  answer is sent (the like fold of `LIKE_FOLD_AFTER_RESPONSE`): data-plane actions on the
  tables it reads and writes, plus the describe calls of /readyz and the admin Tables and
  Activity pages. No CreateTable: a month's activity table is made ahead by the workers
  (`rollup_activity`); a web process that finds it missing logs the failed create and the
  action goes on without its log line (social/activity/services.py).
- **workers**: the six polling commands (`fold_like_events`, `aggregate_counters`,
  `process_feed_retries`, `dispatch_deliveries`, `rollup_activity`, `mail_notifications`) and their heartbeats
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
"""

from __future__ import annotations

from typing import Any

# A Query of a table's indexes (`table/<name>/index/*`), not of the table itself.
INDEX_QUERY = "Query an index"
# The monthly activity tables (social/activity/models.py: `activity_` + YYYYMM); `?` is one character in IAM.
ACTIVITY_MONTHS = "activity_??????"
# What the activity tables' life cycle calls (social/activity/month_tables.py, archive.py,
# rotation.py): create with PITR and deletion protection on AWS (project/table_protection.py),
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
# /readyz (project/health.py) and the admin Tables page (`tables_check`) describe every table.
DESCRIBE = ("DescribeTable", "DescribeTimeToLive", "DescribeContinuousBackups")
# `create_tables`: create, add GSIs (UpdateTable), TTL, PITR and deletion protection (UpdateTable).
CREATE_TABLES = (*DESCRIBE, "CreateTable", "UpdateTable", "UpdateTimeToLive", "UpdateContinuousBackups")

ACCESS: dict[str, dict[str, tuple[str, ...]]] = {
    "web": {
        # Comments: a post is a transactional Put; edit, delete, hide and a like counter's
        # shard count are UpdateItems; pages read by key, BatchGetItem and the timeline,
        # replies and author indexes.
        "comments": ("GetItem", "BatchGetItem", INDEX_QUERY, "PutItem", "UpdateItem"),
        "timeline_days": ("GetItem", "Query", "PutItem"),
        # A like is a transactional Put (an unlike a Delete); pages ask BatchGetItem "liked?".
        "likes": ("BatchGetItem", "PutItem", "DeleteItem"),
        # Counter shards: a like's transactional Update, a view's UpdateItem, the fold's
        # compaction (Delete + Update), the exact value a Query.
        "counters": ("Query", "UpdateItem", "DeleteItem"),
        # Due flags and shard-count overrides (UpdateItem, GetItem), the ranking index.
        "counter_totals": ("GetItem", INDEX_QUERY, "UpdateItem"),
        # The like fold after an answer, mark-read transactions, the inbox (LSI by_num_likes).
        "like_unread": ("GetItem", "BatchGetItem", INDEX_QUERY, "PutItem", "UpdateItem"),
        "like_read": ("Query", "PutItem"),
        "unread_counts": ("GetItem", INDEX_QUERY, "UpdateItem"),
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
        # Notification mail scheduled in a feed write's transaction (a reply, the like fold after
        # an answer); the staff ledger page reads a person's lines and a delivery's (by_source).
        "mail_queue": ("PutItem",),
        "sends": ("Query", INDEX_QUERY),
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
        # (Query) and decisions (UpdateItem).
        "reports": ("GetItem", "Query", "PutItem"),
        # Blocks and mutes: a pair and a person's list (Query: a pair is read as a Query of its
        # key, so no GetItem), a block (transactional Update), an unblock (transactional Delete
        # or Update).
        "blocks": ("Query", "UpdateItem", "DeleteItem"),
        "report_cases": ("GetItem", "BatchGetItem", INDEX_QUERY, "UpdateItem"),
        # Log lines (in a transaction, PutItem, BatchWriteItem), /me/activity (Query), the
        # month's table looked up before its first write and on the admin Activity page.
        ACTIVITY_MONTHS: ("DescribeTable", "Query", "PutItem", "BatchWriteItem"),
    },
    "workers": {
        # Every worker: its heartbeat (Put), deleted on a clean stop.
        "worker_heartbeats": ("PutItem", "DeleteItem"),
        # mail_notifications: due mails (LSI by_due), claimed (UpdateItem), deleted once
        # handled; put by feed writes, the fold and the dispatcher (transactional Put). The
        # ledger: a line claimed (conditional Put), marked (UpdateItem), taken back (Delete);
        # the mail limits (conditional UpdateItem, GetItem on a refusal).
        "mail_queue": (INDEX_QUERY, "PutItem", "UpdateItem", "DeleteItem"),
        "sends": ("GetItem", "PutItem", "UpdateItem", "DeleteItem"),
        "limits": ("GetItem", "UpdateItem"),
        # fold_like_events: a Scan page of pending events, each comment's events (Query),
        # deleted in batches; like rows, markers, the notification, the badge, the comment
        # (hidden meanwhile?), the counter's due flag and its compaction.
        # A block's trigger events (PutItem: the fold after a commit, a drained retraction).
        "like_events": ("Scan", "Query", "PutItem", "BatchWriteItem"),
        "likes": ("BatchGetItem",),
        "like_notified": ("BatchGetItem", "BatchWriteItem"),
        # The unread ones listing a blocked person (a drained retraction: the by_num_likes LSI).
        "like_unread": ("GetItem", INDEX_QUERY, "PutItem", "UpdateItem"),
        # Blocks and mutes read by the fold, a drained retraction and the mail sender.
        "blocks": ("Query",),
        # The fold's comment (hidden meanwhile?); a fan-out's comment, parent and thread root.
        "comments": ("GetItem", "BatchGetItem"),
        "counters": ("Query", "UpdateItem", "DeleteItem"),
        # aggregate_counters: the due index (Query), claims and totals (UpdateItem).
        "counter_totals": ("GetItem", INDEX_QUERY, "UpdateItem"),
        # Badges: the fold's UpdateItem, feed writes' transactional Update.
        "unread_counts": ("GetItem", "UpdateItem"),
        # process_feed_retries: due retries (LSI by_due), claimed (UpdateItem), deleted once applied.
        "feed_retry": (INDEX_QUERY, "UpdateItem", "DeleteItem"),
        # Feed writes (retries, delivered messages: BatchGetItem of a batch's feeds).
        "feed": ("GetItem", "BatchGetItem", "PutItem"),
        # dispatch_deliveries: prepare (chunks, targets), lease, deliver, finish, backlog.
        "deliveries": ("GetItem", "BatchGetItem", "UpdateItem", "ConditionCheckItem"),
        "delivery_chunks": ("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "ConditionCheckItem"),
        "delivery_targets": ("BatchGetItem", "PutItem", "DeleteItem"),
        "delivery_queue": ("Query", "DeleteItem"),
        # Preferences read per batch (the fold, the feed retries, dispatch), by the mail
        # sender at send time, and the digest's readers (the sparse digest index).
        "preferences": ("GetItem", "BatchGetItem", INDEX_QUERY),
        # Muted threads (the fold), watchers of a thread (a retried reply's fan-out).
        "thread_subscriptions": ("GetItem", "BatchGetItem", "Query", "PutItem"),
        # rollup_activity (by_day Query, and the hourly life cycle); the fold's and the
        # dispatcher's log lines (BatchWriteItem).
        ACTIVITY_MONTHS: (*ACTIVITY_LIFE_CYCLE, "BatchWriteItem"),
    },
    # Beside create_tables' actions on every declared table (`EVERY_TABLE` below):
    "operators": {
        # counter_shards: a comment's like shard count, a counter's override (and the
        # --copy-like-overrides Scan), the counter's value.
        "comments": ("GetItem", "UpdateItem"),
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
    "of /readyz and the admin pages. Generated by python manage.py cloudformation (project/cloudformation_iam.py).",
    "workers": "Dynamo Social workers (fold_like_events, aggregate_counters, process_feed_retries, "
    "dispatch_deliveries, rollup_activity, mail_notifications): their tables, and the monthly activity "
    "tables' life cycle. "
    "Generated by python manage.py cloudformation (project/cloudformation_iam.py).",
    "operators": "Dynamo Social operators' commands (create_tables, activity_tables, health, counter_shards, "
    "login_unlock): table creation and checks, the monthly activity tables. "
    "Generated by python manage.py cloudformation (project/cloudformation_iam.py).",
}
# Roles whose policy says `dynamodb:Describe*` for DESCRIBE (policy_document says why).
DESCRIBE_WILDCARD = ("web",)
# Roles whose activity life cycle exports a month to S3 (ACTIVITY_EXPORT_S3_BUCKET).
EXPORTERS = ("workers", "operators")


def _arn(path: str) -> dict[str, str]:
    return {"Fn::Sub": f"arn:${{AWS::Partition}}:dynamodb:${{AWS::Region}}:${{AWS::AccountId}}:table/{path}"}


def _table(logical_name: str) -> str:
    return f"${{TablePrefix}}{logical_name}"


def role_access(role: str, tables: list[str]) -> dict[str, set[str]]:
    """`{resource path under table/: {actions}}` of `role` over the declared `tables`."""
    unknown = sorted(set(ACCESS[role]) - set(tables) - {ACTIVITY_MONTHS})
    if unknown:
        raise ValueError(f"ACCESS[{role!r}] in project/cloudformation_iam.py names tables no model declares: {unknown}")
    unused = sorted(set(tables) - set(ACCESS["web"]) - set(ACCESS["workers"]))
    if unused:
        raise ValueError(
            f"no process reads or writes table(s) {unused}: give each its actions in ACCESS "
            "(project/cloudformation_iam.py), then run python manage.py cloudformation"
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


def policy_document(role: str, tables: list[str]) -> dict[str, Any]:
    """The policy of `role`: one statement per set of actions, over every resource that takes exactly that set."""
    by_actions: dict[tuple[str, ...], list[str]] = {}
    for resource, allowed in role_access(role, tables).items():
        by_actions.setdefault(tuple(sorted(allowed)), []).append(resource)
    statements: list[Any] = [
        {"Effect": "Allow", "Action": [f"dynamodb:{a}" for a in ACCOUNT_WIDE[role]], "Resource": "*"}
    ]
    for actions, resources in sorted(by_actions.items(), key=lambda pair: sorted(pair[1])):
        named = [f"dynamodb:{action}" for action in actions]
        if role in DESCRIBE_WILDCARD and set(DESCRIBE) <= set(actions):
            # The web's policy names every table with its describe calls beside its data calls:
            # `Describe*` (read-only metadata of those tables only) keeps it within IAM's 6,144
            # characters, where the three names in each of its ~20 statements did not.
            named = ["dynamodb:Describe*", *(name for name in named if name.removeprefix("dynamodb:") not in DESCRIBE)]
        statements.append(
            {
                "Effect": "Allow",
                "Action": named,
                "Resource": [_arn(resource) for resource in sorted(resources)],
            }
        )
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
    return {"Version": "2012-10-17", "Statement": statements}


def policy_resources(tables: list[str]) -> dict[str, Any]:
    """The three AWS::IAM::ManagedPolicy resources, by logical id."""
    return {
        f"{role.capitalize()}Policy": {
            "Type": "AWS::IAM::ManagedPolicy",
            "Properties": {"Description": DESCRIPTIONS[role], "PolicyDocument": policy_document(role, tables)},
        }
        for role in ACCESS
    }
