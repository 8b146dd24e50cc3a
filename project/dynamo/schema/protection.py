"""Point-in-time recovery (PITR) and deletion protection of the tables on AWS.

The CloudFormation template (`python manage.py cloudformation`, deploy/aws/tables.yaml)
declares both for every table it holds. A deployment without it gets them from the code:
every table `create_tables` creates, and every month's activity table `activity_tables`
(or a writer) creates, is protected right after it becomes ACTIVE (`table_protect`), and
`create_tables --check` reports a table without them as drift (`table_protection_drift`).
The activity log drops a month's table on purpose, after its export checked out: it takes
the protection off first (`table_unprotect`).

Only on AWS: development and test tables on DynamoDB Local are dropped and re-created at
will. DynamoDB Local (2026-05-28) answers deletion protection (CreateTable, UpdateTable,
DescribeTable's `DeletionProtectionEnabled`, and a refused DeleteTable) but not PITR:
DescribeContinuousBackups and UpdateContinuousBackups are `UnknownOperationException`. What
an endpoint does not answer is reported as not checked, never as drift or as an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError
from django.conf import settings

from project.clock import clock
from project.dynamo.clients import client, endpoint
from project.dynamo.schema.describe import table_describe
from project.errors import error_code

logger = logging.getLogger(__name__)

# Right after CreateTable, AWS may refuse UpdateContinuousBackups for a while
# ("ContinuousBackupsUnavailableException: backups are being enabled"): tried again,
# 2 s apart, for up to a minute.
PITR_ATTEMPTS = 30
PITR_RETRY_SECONDS = 2.0
UNKNOWN_OPERATION = "UnknownOperationException"


def endpoint_is_aws() -> bool:
    """True on AWS DynamoDB: `DYNAMODB_HOST` empty (the AWS endpoint of DYNAMODB_REGION), or
    real credentials sent to an endpoint (`DYNAMODB_LOCAL_CREDENTIALS=False`, a VPC endpoint)."""
    return endpoint().host is None or not settings.DYNAMODB_LOCAL_CREDENTIALS


def table_protect(name: str) -> list[str]:
    """On AWS, switch on PITR and deletion protection of the ACTIVE table `name`; returns
    what was switched on (nothing off AWS). Idempotent: what is on already is left alone."""
    if not endpoint_is_aws():
        return []
    done = []
    description = client().describe_table(TableName=name)["Table"]
    if _pitr_enabled(name) is False:  # None: the endpoint has no PITR to switch on
        _pitr_enable(name)
        done.append("point-in-time recovery")
    if not description.get("DeletionProtectionEnabled", False):
        client().update_table(TableName=name, DeletionProtectionEnabled=True)
        done.append("deletion protection")
    if done:
        logger.info("table %s: %s switched on", name, " and ".join(done))
    return done


def table_unprotect(name: str) -> None:
    """Take deletion protection off the table `name` before a deliberate DeleteTable (any endpoint)."""
    description = table_describe(name)
    if description and description.get("DeletionProtectionEnabled", False):
        client().update_table(TableName=name, DeletionProtectionEnabled=False)
        logger.info("table %s: deletion protection switched off, to drop it", name)


def _pitr_enabled(name: str) -> bool | None:
    """Whether PITR is on; None when the endpoint has no continuous backups (DynamoDB Local)."""
    try:
        answer = client().describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
    except ClientError as error:
        if error_code(error) == UNKNOWN_OPERATION:
            return None
        raise
    pitr: dict[str, Any] = answer.get("PointInTimeRecoveryDescription", {})
    return pitr.get("PointInTimeRecoveryStatus") == "ENABLED"


def _pitr_enable(name: str) -> None:
    for attempt in range(PITR_ATTEMPTS):
        try:
            client().update_continuous_backups(
                TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
            return
        except ClientError as error:
            if error_code(error) != "ContinuousBackupsUnavailableException" or attempt + 1 == PITR_ATTEMPTS:
                raise
            clock.sleep(PITR_RETRY_SECONDS)


@dataclass
class ProtectionCheck:
    drift: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # what the endpoint could not say, once per run


def table_protection_drift(name: str, description: dict[str, Any]) -> ProtectionCheck:
    """On AWS, a table without PITR or deletion protection is drift; elsewhere nothing is
    checked (`unchecked` says so), and what the endpoint does not answer is not checked."""
    check = ProtectionCheck()
    if not endpoint_is_aws():
        check.unchecked.append(
            f"point-in-time recovery and deletion protection: expected on AWS only, not on "
            f"{endpoint().host} (create_tables leaves tables there unprotected)"
        )
        return check
    if "DeletionProtectionEnabled" not in description:
        check.unchecked.append("deletion protection: DescribeTable does not say (not checked)")
    elif not description["DeletionProtectionEnabled"]:
        check.drift.append(
            "deletion protection is off (the template declares it on: deploy it, or "
            "`aws dynamodb update-table --deletion-protection-enabled`)"
        )
    pitr = _pitr_enabled(name)
    if pitr is None:
        check.unchecked.append("point-in-time recovery: the endpoint does not answer DescribeContinuousBackups")
    elif not pitr:
        check.drift.append(
            "point-in-time recovery is off (the template declares it on: deploy it, or "
            "`aws dynamodb update-continuous-backups`)"
        )
    return check
