"""Tables of the `project` room: the shared limit store (project/limits.py)."""

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.models import Model

from project.dynamo import table_meta


class LimitCounter(Model):
    """One limit's counts for one subject in one window of the limit's longest rule.

    The key `<name>#<subject>#<window start>` is new every window, so the counts of a
    window are never read again once it is over and TTL deletes them. A limit of up to
    three rules ("10/min,100/day") keeps its shorter windows in the same item (`start1`,
    `count1`, ...): one conditional UpdateItem checks and counts every rule at once.
    The same table holds once-per-window marks (`once#...`, a conditional put) and the
    log-in backoff of an account (`next_at`).
    """

    Meta = table_meta("limits")

    key = UnicodeAttribute(hash_key=True)
    count = NumberAttribute(null=True)  # hits in the longest rule's window (the key's)
    start1 = NumberAttribute(null=True)  # start of the current window of the shortest rule
    count1 = NumberAttribute(null=True)
    start2 = NumberAttribute(null=True)
    count2 = NumberAttribute(null=True)
    next_at = NumberAttribute(null=True)  # log-in backoff: the next guess checked not before this
    expires_at = TTLAttribute(null=True)
