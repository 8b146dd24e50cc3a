"""A popular comment on AWS: many people like it at once under AWS's transaction
conflict rules (modelled on DynamoDB Local by the `aws_conflicts` fixture), and no like fails."""

import io
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import pytest
from botocore.exceptions import ClientError
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from notifications import selectors as notification_selectors
from notifications.models import LikeEvent, LikeUnread
from project.dynamo import wire
from project.errors import NotFound
from social import counter_compaction, counters
from social.counters import LIKES, counter_key
from social.models import Comment, CounterShard, CounterTotal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.usefixtures("aws_read_lag")]

PEOPLE = 32


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_32_people_like_unlike_and_like_again_one_comment_without_a_failure(
    make_user, aws_conflicts, fold_likes, settings
):
    settings.LIKE_COUNTER_SHARDS = 1  # the counter grows its shards by itself
    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Popular").comment_id
    tokens = [Token.objects.create(user=make_user(f"fan{n}")).key for n in range(PEOPLE)]
    url = f"/api/comments/{comment_id}/like/"

    def like_unlike_like(token):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        answers = [client.put(url), client.delete(url), client.put(url)]
        return [(answer.status_code, answer.json()) for answer in answers]

    with ThreadPoolExecutor(max_workers=PEOPLE) as pool:
        results = list(pool.map(like_unlike_like, tokens))

    statuses = [status for person in results for status, _ in person]
    assert statuses == [200] * (3 * PEOPLE)
    for (_, liked), (_, unliked), (_, liked_again) in results:
        assert (liked["liked"], unliked["liked"], liked_again["liked"]) == (True, False, True)
        assert 1 <= liked_again["like_count"] <= PEOPLE
    assert aws_conflicts.transactions >= 3 * PEOPLE
    assert APIClient().get(f"/api/comments/{comment_id}/").json()["like_count"] == PEOPLE

    fold_likes()
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []
    unread = LikeUnread.get(str(author.pk), comment_id, consistent_read=True)
    # each person notifies once, although each liked twice
    assert (
        int(unread.num_likes)
        == PEOPLE
        == sum(notification_selectors.unread_count_sources(user_id=str(author.pk)).values())
    )
    assert notification_selectors.unread_count(user_id=str(author.pk)) == 1  # one notification of them all
    assert len(unread.liker_ids) == len(set(unread.liker_ids)) == min(PEOPLE, settings.LIKE_NOTIFICATION_LIKERS_MAX)


@pytest.fixture
def hot(make_user):
    """A comment and its like counter's key."""
    comment_id = comment_create(author_id=str(make_user("author").pk), body="Hot").comment_id
    return comment_id, counter_key(kind=LIKES, object_id=comment_id)


def carried(comment_id):
    """The like counter's shard count the comment item carries (None: the kind's setting)."""
    shards = Comment.get(comment_id, consistent_read=True).like_shards
    return None if shards is None else int(shards)


def test_a_contended_counter_grows_its_shards_up_to_the_maximum(settings, hot):
    settings.LIKE_COUNTER_SHARDS = 1
    settings.COUNTER_SHARDS_MAX = 20
    comment_id, key = hot
    grown = []
    for _ in range(4):
        counters._grown_at.clear()  # one growth per SHARD_GROWTH_INTERVAL: let each call grow
        grown.append(counters.counter_contended(key=key))
    assert grown == [4, 16, 20, 20]
    counters.counters_forget_caches()
    assert counters.counter_shard_count(key=key) == 20 == carried(comment_id)  # stored, seen by every process
    # staff still set any count, on the comment too; contention grows it again from there
    counters.counter_set_shards(key=key, shards=2)
    assert carried(comment_id) == 2
    counters._grown_at.clear()
    assert counters.counter_contended(key=key) == 8 == carried(comment_id)


def test_a_contended_counter_never_shrinks_a_larger_count_another_process_stored(settings, hot):
    settings.LIKE_COUNTER_SHARDS = 1
    comment_id, key = hot
    counters.counter_contended(key=key)  # this process: 4
    counters.counter_set_shards(key=key, shards=32)  # another process grew it further
    counters._override_remember(key, 4)  # this process still believes 4
    counters._grown_at.clear()
    # its write (16) is refused; it re-reads and writes with the stored, larger count
    assert counters.counter_contended(key=key) == 32 == counters.counter_shard_count(key=key) == carried(comment_id)


class DynamoCalls:
    """Every DynamoDB call made while active, as (operation, table)."""

    def __init__(self):
        self.calls = []

    def __enter__(self):
        real = wire.make_api_call

        def spy(client, operation_name, api_params):
            self.calls.append((operation_name, api_params.get("TableName"), api_params))
            return real(client, operation_name, api_params)

        self._patch = mock.patch.object(wire, "make_api_call", spy)
        self._patch.start()
        return self

    def __exit__(self, *exc):
        self._patch.stop()

    def tables(self):
        return [(operation, table) for operation, table, _ in self.calls]


def like_in_a_fresh_process(comment_id, user_id):
    """`like_add` as a process that has never seen the counter makes it: its calls, and the shard it wrote."""
    counters.counters_forget_caches()
    with DynamoCalls() as spy:
        like_add(comment_id=comment_id, user_id=user_id)
    (transaction,) = [params for operation, _, params in spy.calls if operation == "TransactWriteItems"]
    (shard,) = [
        int(action["Update"]["Key"]["shard"]["N"])
        for action in transaction["TransactItems"]
        if action.get("Update", {}).get("TableName") == CounterShard.Meta.table_name
    ]
    return spy.tables(), shard


def test_after_growth_a_like_in_another_process_spreads_wider_with_no_read_of_its_own(settings, hot):
    settings.LIKE_COUNTER_SHARDS = 1
    settings.LIKE_FOLD_AFTER_RESPONSE = False  # the calls of the like alone
    comment_id, key = hot
    assert counters.counter_contended(key=key) == 4
    shards_used = set()
    for n in range(24):
        calls, shard = like_in_a_fresh_process(comment_id, f"fan{n}")
        assert calls == [
            ("GetItem", Comment.Meta.table_name),
            ("TransactWriteItems", None),
            ("Query", CounterShard.Meta.table_name),
        ]
        shards_used.add(shard)
    assert shards_used <= {0, 1, 2, 3} and len(shards_used) > 1
    assert counters.counter_value(key=key) == 24


def test_a_like_cancelled_on_its_shard_grows_the_counter_onto_the_comment(settings, hot):
    """The like's own retry grows the counter (the cancellation is injected: DynamoDB Local never
    cancels), and a like in another process then spreads over the grown count."""
    settings.LIKE_COUNTER_SHARDS = 1
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    comment_id, key = hot
    real = wire.make_api_call
    cancelled = []

    def cancel_the_first_transaction(client, operation_name, api_params):
        if operation_name == "TransactWriteItems" and not cancelled:
            cancelled.append(api_params)
            reasons = [{"Code": "None"}, {"Code": "TransactionConflict"}, {"Code": "None"}]  # the shard's action
            error = {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"}
            raise ClientError({"Error": error, "CancellationReasons": reasons}, operation_name)
        return real(client, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", cancel_the_first_transaction):
        assert like_add(comment_id=comment_id, user_id="first").like_count == 1
    assert cancelled and carried(comment_id) == 4
    shards_used = {like_in_a_fresh_process(comment_id, f"fan{n}")[1] for n in range(24)}
    assert shards_used <= {0, 1, 2, 3} and len(shards_used) > 1
    assert counters.counter_value(key=key) == 25


def test_staff_set_reaches_the_next_like_of_any_process_through_the_comment(settings, hot):
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    comment_id, key = hot
    counters.counter_set_shards(key=key, shards=16)
    assert carried(comment_id) == 16
    shards_used = {like_in_a_fresh_process(comment_id, f"fan{n}")[1] for n in range(24)}
    assert max(shards_used) < 16 and len(shards_used) > 1
    counters.counter_set_shards(key=key, shards=1)  # staff lower it: the comment carries it as given
    assert carried(comment_id) == 1
    assert {like_in_a_fresh_process(comment_id, f"late{n}")[1] for n in range(8)} == {0}
    assert counters.counter_value(key=key) == 32


def test_setting_the_shards_of_an_unknown_comments_likes_is_refused_and_writes_nothing():
    key = counter_key(kind=LIKES, object_id="6f1d3a52-2a1c-4c55-9a43-0d8f0e0a8b11")
    with pytest.raises(NotFound):
        counters.counter_set_shards(key=key, shards=8)
    assert list(CounterTotal.scan()) == []
    assert list(Comment.scan()) == []


def test_a_counter_grown_before_comments_carried_it_heals_at_its_next_contention(settings, hot):
    settings.LIKE_COUNTER_SHARDS = 1
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    comment_id, key = hot
    CounterTotal(key).update(actions=[CounterTotal.shards.set(16)])  # stored where only views and staff read it
    assert like_in_a_fresh_process(comment_id, "early")[1] == 0  # the like knows only the comment
    counters.counters_forget_caches()
    assert counters.counter_contended(key=key, current=1) == 16  # refused (16 >= 4): reads 16, copies it
    assert carried(comment_id) == 16


def test_the_command_copies_stored_like_overrides_onto_their_comments(settings, make_user):
    author = str(make_user("author").pk)
    old, larger, viewed = (comment_create(author_id=author, body=b).comment_id for b in ("old", "larger", "viewed"))
    for comment_id, shards in ((old, 16), (larger, 8)):
        CounterTotal(counter_key(kind=LIKES, object_id=comment_id)).update(
            actions=[
                CounterTotal.shards.set(shards),
                CounterTotal.kind.set(LIKES),
                CounterTotal.object_id.set(comment_id),
            ]
        )
    Comment(larger).update(actions=[Comment.like_shards.set(32)])  # grown since: never lowered
    counters.counter_set_shards(key=counter_key(kind=counters.VIEWS, object_id=viewed), shards=4)
    out = io.StringIO()
    call_command("counter_shards", "--copy-like-overrides", stdout=out)
    assert "2 stored like override(s), 1 copied" in out.getvalue()
    assert (carried(old), carried(larger), carried(viewed)) == (16, 32, None)
    out = io.StringIO()
    call_command("counter_shards", "--copy-like-overrides", stdout=out)  # again: nothing left to copy
    assert "2 stored like override(s), 0 copied" in out.getvalue()
    with pytest.raises(CommandError, match="takes no counter"):
        call_command("counter_shards", "likes", old, "--copy-like-overrides")
    with pytest.raises(CommandError, match="Name the counter"):
        call_command("counter_shards")


def test_the_folder_compacts_a_hot_counter_so_a_page_reads_one_item(make_user, settings, fold_likes):
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Hot").comment_id
    key = counter_key(kind=LIKES, object_id=comment_id)
    counters.counter_set_shards(key=key, shards=32)
    for n in range(40):
        like_add(comment_id=comment_id, user_id=str(100 + n))
    assert len(list(counters.CounterShard.query(key, consistent_read=True))) >= counter_compaction.COMPACT_MIN_ITEMS
    fold_likes()
    items = counters.CounterShard.query(key, consistent_read=True)
    assert [(int(item.shard), int(item.count)) for item in items] == [(-1, 40)]
    assert like_remove(comment_id=comment_id, user_id="100").like_count == 39
    assert like_add(comment_id=comment_id, user_id="999").like_count == 40


def test_a_like_landing_during_compaction_cancels_it_and_nothing_is_lost(make_user):
    from unittest import mock

    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Hot").comment_id
    key = counter_key(kind=LIKES, object_id=comment_id)
    for shard in range(10):
        counters.CounterShard(key, shard, count=2).save()
    real_query = counters.CounterShard.query

    def query_then_like(*args, **kwargs):
        found = list(real_query(*args, **kwargs))
        counters.CounterShard(key, 3).update(actions=[counters.CounterShard.count.add(1)])  # lands now
        return found

    with mock.patch.object(counters.CounterShard, "query", query_then_like):
        assert counter_compaction.counter_compact(key=key) is False
    assert counters.counter_value(key=key) == 21
    assert counter_compaction.counter_compact(key=key) is True
    assert [(int(item.shard), int(item.count)) for item in real_query(key, consistent_read=True)] == [(-1, 21)]
