"""`python manage.py profile_index_backfill`: list comments from before the `profile` index in it."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from social import profile_index


class Command(BaseCommand):
    help = (
        "Give every visible comment written before the profile index existed its entry there "
        "(profile_author), so its author's profile lists it. One Scan of comments and one "
        "conditional UpdateItem per such comment; run it once after deploying the index. "
        "Safe to run again or to stop at any point: it sets only what is still missing."
    )

    def handle(self, *args, **options):
        found, written = profile_index.comment_profile_backfill()
        self.stdout.write(f"{found} visible comment(s) without a profile entry, {written} listed now")
