"""Tables of the `project` room: the answers of create requests kept for their Idempotency-Key."""

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.models import Model

from project.dynamo import table_meta


class IdempotencyRecord(Model):
    """One `Idempotency-Key` of one user (project/idempotency.py).

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
