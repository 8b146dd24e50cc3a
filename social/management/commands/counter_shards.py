"""`python manage.py counter_shards likes <comment_id> [N]`: show or set one counter's shard count.

`python manage.py counter_shards --copy-like-overrides`: copy every stored like override onto its comment.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from project.errors import ApplicationError, NotFound
from social import counters, selectors

KIND_NAMES = {"likes": counters.LIKES, "views": counters.VIEWS}


class Command(BaseCommand):
    help = (
        "Show, or with N set, how many shards new writes of one counter spread over (raise it for a hot "
        "comment whose counter takes many concurrent writes). Counts are kept: existing shards are summed "
        "whatever the shard count. A like counter's count is written onto its comment too, so the next like "
        "of the comment uses it; views pick it up within 30 seconds. --copy-like-overrides copies every "
        "like counter's stored count onto its comment (never lowering one a comment carries), for overrides "
        "stored on counter_totals alone: one Scan of counter_totals, run it once."
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", nargs="?", choices=sorted(KIND_NAMES), help="which counter of the comment")
        parser.add_argument("comment_id", nargs="?", help="the comment whose counter to change")
        parser.add_argument("shards", nargs="?", type=int, help="new shard count (1..COUNTER_SHARDS_MAX)")
        parser.add_argument(
            "--copy-like-overrides",
            action="store_true",
            help="copy every stored like override onto its comment (instead of one counter)",
        )

    def handle(self, *args, kind: str | None, comment_id: str | None, shards: int | None, **options):
        if options["copy_like_overrides"]:
            if kind or comment_id:
                raise CommandError("--copy-like-overrides takes no counter.")
            found, copied = counters.counter_like_overrides_copy()
            self.stdout.write(
                f"{found} stored like override(s), {copied} copied onto their comments "
                "(the others' comments carry as many or more, or are gone)"
            )
            return
        if not kind or not comment_id:
            raise CommandError("Name the counter (likes|views <comment_id>) or give --copy-like-overrides.")
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
