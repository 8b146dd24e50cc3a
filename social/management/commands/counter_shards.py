"""`python manage.py counter_shards likes <comment_id> [N]`: show or set one counter's shard count."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from project.errors import ApplicationError, NotFound
from social import counters, selectors

KIND_NAMES = {"likes": counters.LIKES, "views": counters.VIEWS}


class Command(BaseCommand):
    help = (
        "Show, or with N set, how many shards new writes of one counter spread over (raise it for a hot "
        "comment whose counter takes many concurrent writes). Counts are kept: existing shards are summed "
        "whatever the shard count; web processes pick the new count up within 30 seconds."
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=sorted(KIND_NAMES), help="which counter of the comment")
        parser.add_argument("comment_id", help="the comment whose counter to change")
        parser.add_argument("shards", nargs="?", type=int, help="new shard count (1..COUNTER_SHARDS_MAX)")

    def handle(self, *args, kind: str, comment_id: str, shards: int | None, **options):
        try:
            selectors.comment_get(comment_id=comment_id, viewer_id=None, include_hidden=True)
        except NotFound:
            raise CommandError(f"No comment {comment_id}.") from None
        key = counters.counter_key(kind=KIND_NAMES[kind], object_id=comment_id)
        if shards is not None:
            try:
                counters.counter_set_shards(key=key, shards=shards)
            except ApplicationError as error:
                raise CommandError(error.message) from None
        self.stdout.write(
            f"{key}: {counters.counter_shard_count(key=key)} shard(s), value {counters.counter_value(key=key)}"
        )
