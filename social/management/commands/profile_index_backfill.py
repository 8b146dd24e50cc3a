"""`python manage.py profile_index_backfill`: list in the `profile` index every visible comment missing there."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from social import profile_index


class Command(BaseCommand):
    help = (
        "Give every visible comment that lacks its profile index entry (profile_author) one, so "
        "its author's profile lists it. One Scan of comments and one conditional UpdateItem per "
        "such comment. "
        "Safe to run again or to stop at any point: it sets only what is still missing."
    )

    def handle(self, *args, **options):
        found, written = profile_index.comment_profile_backfill()
        self.stdout.write(f"{found} visible comment(s) without a profile entry, {written} listed now")
