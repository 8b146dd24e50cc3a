import random

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.test.utils import override_settings

from actions.comments import comment_create
from actions.likes import like_add
from social import selectors

DEMO_USERS = [
    ("alice", "Alice Tanaka"),
    ("bob", "Bob Sato"),
    ("carol", "Carol Suzuki"),
    ("dave", "Dave Ito"),
]
DEMO_PASSWORD = "demo-pass-2026"
DEMO_COMMENTS = [
    "Has anyone tried the new influenza guidelines in a busy outpatient clinic?",
    "Night shift tip: prepare tomorrow's handover notes before 3 a.m., not after.",
    "Great conference today. The session on sepsis bundles was the highlight.",
    "Looking for recommendations on a good pocket reference for paediatric dosing.",
    "Reminder: the journal club moves to Thursday this week.",
]


class Command(BaseCommand):
    help = (
        "Create demo users (printed with their password), comments, replies and likes so a newcomer "
        "sees a living timeline. With --if-empty, do nothing when the timeline already has comments."
    )

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="skip when there are comments already")

    def handle(self, *args, if_empty: bool = False, **options):
        if if_empty and selectors.comment_timeline(viewer_id=None, limit=1).results:
            self.stdout.write("Timeline has comments already; no demo data added.")
            return
        User = get_user_model()
        users = []
        for username, display_name in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username, defaults={"display_name": display_name})
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            users.append(user)
        staff, created = User.objects.get_or_create(
            username="admin", defaults={"display_name": "Site Admin", "is_staff": True, "is_superuser": True}
        )
        if created:
            staff.set_password(DEMO_PASSWORD)
            staff.save()
        # The operator writes the demo on the demo people's behalf, faster than any person may:
        # the per-account write limits are for people, not for this command.
        with override_settings(RATE_LIMITS_ENABLED=False):
            self._write_demo(users)
        login = f"http://{settings.HOST}:{settings.PORT}/accounts/login/"
        self.stdout.write(self.style.SUCCESS(f"Demo data ready. Log in at {login} with:"))
        for user in [*users, staff]:
            role = " (staff, /admin/)" if user.is_staff else ""
            self.stdout.write(f"  {user.username} / {DEMO_PASSWORD}{role}")

    def _write_demo(self, users):
        rng = random.Random(2026)
        for text in DEMO_COMMENTS:
            author = rng.choice(users)
            comment = comment_create(author_id=str(author.pk), body=text)
            for liker in rng.sample(users, rng.randint(0, len(users))):
                like_add(comment_id=comment.comment_id, user_id=str(liker.pk))
            if rng.random() < 0.6:
                replier = rng.choice([user for user in users if user != author])
                comment_create(author_id=str(replier.pk), body="Thanks for sharing!", parent_id=comment.comment_id)
