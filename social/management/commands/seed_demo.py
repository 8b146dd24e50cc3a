import random
import secrets

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
DEMO_COMMENTS = [
    "Has anyone tried the new influenza guidelines in a busy outpatient clinic?",
    "Night shift tip: prepare tomorrow's handover notes before 3 a.m., not after.",
    "Great conference today. The session on sepsis bundles was the highlight.",
    "Looking for recommendations on a good pocket reference for paediatric dosing.",
    "Reminder: the journal club moves to Thursday this week.",
]


class Command(BaseCommand):
    help = (
        "Create demo users, comments, replies and likes so a newcomer sees a living timeline, and a staff "
        "account `admin`. Each account created gets a random password, printed once here (never a published "
        "one: a site that is reachable must not have a known log-in). make run runs this only with "
        "SEED_DEMO=true. With --if-empty, do nothing when the timeline already has comments."
    )

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="skip when there are comments already")

    def handle(self, *args, if_empty: bool = False, **options):
        if if_empty and selectors.comment_timeline(viewer_id=None, limit=1).results:
            self.stdout.write("Timeline has comments already; no demo data added.")
            return
        User = get_user_model()
        passwords = {}  # of the accounts created now; an existing account keeps its own

        def account(username, **defaults):
            user, created = User.objects.get_or_create(username=username, defaults=defaults)
            if created:
                passwords[username] = secrets.token_urlsafe(12)
                user.set_password(passwords[username])
                user.save()
            return user

        users = [account(username, display_name=display_name) for username, display_name in DEMO_USERS]
        staff = account("admin", display_name="Site Admin", is_staff=True, is_superuser=True)
        # The operator writes the demo on the demo people's behalf, faster than any person may:
        # the per-account write limits are for people, not for this command.
        with override_settings(RATE_LIMITS_ENABLED=False):
            self._write_demo(users)
        login = f"http://{settings.HOST}:{settings.PORT}/accounts/login/"
        self.stdout.write(self.style.SUCCESS(f"Demo data ready. Log in at {login} with:"))
        for user in [*users, staff]:
            role = " (staff, /admin/)" if user.is_staff else ""
            password = passwords.get(user.username, "(existing account: its own password)")
            self.stdout.write(f"  {user.username} / {password}{role}")

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
