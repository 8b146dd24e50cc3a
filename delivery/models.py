"""Tables of the `delivery` room (docs/reference/tables.md "Tables").

- `deliveries`: one item per broadcast: what to send, to whom (the audience spec),
  status, and the counters the dispatcher keeps (`cursor`, `delivered_count`...).
- `delivery_chunks`: the frozen target list, at most 1,000 user ids per item,
  keyed `<delivery_id>#<seq>` so reads and lease writes spread over partitions.
- `delivery_targets`: PK `user_id`, SK `delivery_id`; the item exists exactly while
  that user still has to receive that delivery. Deleting it (condition: it exists)
  in the same transaction as the feed write is what makes delivery exactly once.
- `delivery_queue`: one item per delivery that still needs work, in one partition,
  so a dispatcher finds its work with a strongly consistent Query (no GSI, no Scan).

Only strongly consistent key reads are used on the dispatch path; the `by_created`
index of `deliveries` serves the staff listing only.
"""

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    NumberSetAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from project.dynamo.clients import table_meta

# Delivery statuses, in the order a delivery moves through them.
DRAFT = "draft"
PREPARING = "preparing"
READY = "ready"
DISPATCHING = "dispatching"
DONE = "done"
CANCELLED = "cancelled"
FINAL_STATUSES = (DONE, CANCELLED)

# Audience kinds.
AUDIENCE_ALL = "all"
AUDIENCE_GROUP = "group"
AUDIENCE_USERNAMES = "usernames"

# Chunk statuses.
CHUNK_PENDING = "pending"
CHUNK_DONE = "done"

QUEUE = "active"  # the one partition of `delivery_queue`


def chunk_key(delivery_id: str, seq: int) -> str:
    """The key of chunk `seq` of a delivery (`<delivery_id>#<seq>`)."""
    return f"{delivery_id}#{seq}"


LIST_BUCKET = "all"  # the `by_created` partition every delivery is listed under


class DeliveriesByCreated(GlobalSecondaryIndex):
    """Every delivery, newest first, for the staff list (never read on the dispatch path)."""

    class Meta:
        index_name = "by_created"
        projection = AllProjection()

    list_bucket = UnicodeAttribute(hash_key=True)
    created_at = UnicodeAttribute(range_key=True)


class Delivery(Model):
    Meta = table_meta("deliveries")

    delivery_id = UnicodeAttribute(hash_key=True)
    title = UnicodeAttribute()
    body = UnicodeAttribute()
    url = UnicodeAttribute(null=True)
    audience_kind = UnicodeAttribute()  # all | group | usernames
    audience_group = UnicodeAttribute(null=True)
    audience_requested = NumberAttribute(default=0)  # usernames given (usernames audience)
    # PynamoDB types ListAttribute's `of` as the element's Python type (str), but it takes the
    # attribute class (UnicodeAttribute): each ignore below is that mismatch.
    # Unknown usernames reported, the first 1,000.
    unknown_usernames = ListAttribute[str](of=UnicodeAttribute, null=True)  # type: ignore[arg-type]
    unknown_count = NumberAttribute(default=0)
    status = UnicodeAttribute()
    created_by_id = UnicodeAttribute()
    created_by_name = UnicodeAttribute()
    created_at = UnicodeAttribute()
    updated_at = UnicodeAttribute()
    finished_at = UnicodeAttribute(null=True)
    list_bucket = UnicodeAttribute(default=LIST_BUCKET)

    # Prepare: chunks 0..frozen_chunks-1 exist with their targets written;
    # `prepare_after` is the last user id frozen (keyset position of the audience
    # query), `audience_max_id` the highest user id when preparing began, so people
    # who sign up later are not swept in.
    frozen_chunks = NumberAttribute(default=0)
    prepare_after = NumberAttribute(default=0)
    audience_max_id = NumberAttribute(null=True)
    total_targets = NumberAttribute(default=0)
    chunk_count = NumberAttribute(null=True)  # set when the delivery is ready

    # Dispatch: `cursor` is the next chunk to hand out; `in_flight` the chunks handed
    # out and not done yet (their leases may expire and be taken over).
    cursor = NumberAttribute(default=0)
    in_flight = NumberSetAttribute(null=True)
    chunks_done = NumberAttribute(default=0)
    delivered_count = NumberAttribute(default=0)  # sum of done chunks' `delivered`
    skipped_count = NumberAttribute(default=0)  # targets dropped (account deleted)

    by_created = DeliveriesByCreated()


class DeliveryChunk(Model):
    """Up to 1,000 frozen user ids of one delivery, and the lease of the dispatcher on it."""

    Meta = table_meta("delivery_chunks")

    chunk_key = UnicodeAttribute(hash_key=True)  # <delivery_id>#<seq>
    delivery_id = UnicodeAttribute()
    seq = NumberAttribute()
    user_ids = ListAttribute[str](of=UnicodeAttribute)  # type: ignore[arg-type]  # ascending user id order
    # Set once every target item of the chunk is written; target writes are
    # conditioned on it being unset, so a stalled preparer can never re-create a
    # target that a dispatcher already delivered and deleted.
    targets_written = BooleanAttribute(default=False)
    status = UnicodeAttribute(default=CHUNK_PENDING)
    lease_owner = UnicodeAttribute(null=True)
    lease_token = UnicodeAttribute(null=True)
    lease_expires_at = NumberAttribute(default=0)  # epoch seconds
    delivered = NumberAttribute(default=0)  # added in the very transactions that deliver
    skipped = NumberAttribute(default=0)  # added in the transactions that drop a target
    done_at = UnicodeAttribute(null=True)


class DeliveryTarget(Model):
    """Exists exactly while `user_id` still has to receive `delivery_id`."""

    Meta = table_meta("delivery_targets")

    user_id = UnicodeAttribute(hash_key=True)
    delivery_id = UnicodeAttribute(range_key=True)
    chunk_seq = NumberAttribute()


class DeliveryQueueEntry(Model):
    """A delivery that still needs preparing or dispatching (removed when done or cancelled)."""

    Meta = table_meta("delivery_queue")

    queue = UnicodeAttribute(hash_key=True)  # always "active"
    delivery_id = UnicodeAttribute(range_key=True)
    created_at = UnicodeAttribute()
