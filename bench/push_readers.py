"""Quiet while present, measured: of the pushes sent, the share for entries their reader read
within 60 s anyway (a push they did not need), with realistic readers.

    .venv/bin/python bench/push_readers.py [--people 100] [--seed 1]

Each of `--people` people has push on for replies and one browser subscribed at the local
push-service stand-in (tests/notifications/push_service.py), and gets one reply at t = 0. The
readers (fractions of the people, times drawn uniformly, seeded):

- 25 % in a tab: a page open (it polls every 5 s, as the live badge does), they read the reply
  3-40 s later;
- 10 % in a tab, busy: a page open in the background; they read it 1-10 minutes later;
- 15 % back soon: no page open; they read it 10-60 s later (on another device, or the tab
  they open on seeing it);
- 35 % later: no page open; they read it 2 minutes to 3 hours later;
- 15 % not within the run.

Time is simulated (project.clock.ManualClock), second by second for 15 minutes: pages poll,
readers read, and a sender makes a pass each second as `send_push` does. A push counts as
"read within 60 s" when its reader read the entry within 60 s of the reply. Printed: that
share of the pushes sent with the presence rule (NOTIFY_PRESENT_SECONDS = 60, the default), and
without it (NOTIFY_PRESENT_SECONDS = 0: every push goes at once).
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from _setup import bench_environment

PROFILES = (  # name, share, present (a page open), read after (low, high) seconds, or None: never
    ("in a tab", 0.25, True, (3, 40)),
    ("in a tab, busy", 0.10, True, (60, 600)),
    ("back soon", 0.15, False, (10, 60)),
    ("later", 0.35, False, (120, 3 * 3600)),
    ("not within the run", 0.15, False, None),
)
POLL_EVERY = 5  # seconds between a present page's polls
RUN_SECONDS = 15 * 60


@dataclass
class Reader:
    user_id: str
    profile: str
    present: bool
    read_at: float | None  # seconds after the reply
    read: bool = False


def run(*, people: int, seed: int, present_seconds: int) -> dict[str, float]:
    from django.contrib.auth import get_user_model
    from django.test import override_settings

    from actions.comments import comment_create
    from notifications.feed.selectors import feed_read
    from notifications.mail.queue import PUSH
    from notifications.mail.selectors import SENT, ledger_of_user, mail_queue_due
    from notifications.preferences.services import preferences_update
    from notifications.presence import presence_forget_memory, presence_mark
    from notifications.push.keys import vapid_key_generate, vapid_public_key
    from notifications.push.sender import push_process
    from notifications.push.services import subscription_add
    from notifications.services import inbox_mark_read
    from project.clock import ManualClock, clock_override
    from tests.notifications.push_service import push_service_start

    rng = random.Random(seed)
    settings = {
        "VAPID_PRIVATE_KEY": vapid_key_generate(),
        "LOCAL_PLAIN_HTTP": True,
        "PUSH_SERVICE_HOSTS": ["127.0.0.1"],
        "NOTIFY_PRESENT_SECONDS": present_seconds,
        "HOLD_FOR_REVIEW_ENABLED": False,  # one account replying to many: not a spam case here
    }
    users = get_user_model().objects
    presence_forget_memory()
    with override_settings(**settings), clock_override(ManualClock(start=time.time())) as manual:
        service, server = push_service_start(vapid_public_key=vapid_public_key())
        replier = users.create_user(username=f"replier{present_seconds}", password="!")
        readers: list[Reader] = []
        weights = [share for _, share, _, _ in PROFILES]
        for n in range(people):
            person = users.create_user(username=f"r{present_seconds}_{n}", password="!")
            user_id = str(person.pk)
            preferences_update(user_id=user_id, patch={"kinds": {"reply": {"push": True}}}, limited=False)
            subscription_add(user_id=user_id, data=service.subscribe().to_json())
            name, _, present, window = rng.choices(PROFILES, weights=weights)[0]
            read_at = rng.uniform(*window) if window else None
            readers.append(Reader(user_id, name, present, read_at))
        start = manual.now()
        for reader in readers:  # present from before the reply on
            if reader.present:
                presence_mark(user_id=reader.user_id)
        for reader in readers:  # the replies, all at t = 0 (the clock stands still meanwhile)
            parent = comment_create(author_id=reader.user_id, body="A comment").comment_id
            comment_create(author_id=str(replier.pk), body="A reply", parent_id=parent)
        for second in range(RUN_SECONDS):
            for reader in readers:
                if reader.present and not reader.read and second % POLL_EVERY == 0:
                    presence_mark(user_id=reader.user_id)
                if not reader.read and reader.read_at is not None and reader.read_at <= second:
                    entries = feed_read(user_id=reader.user_id).entries
                    inbox_mark_read(user_id=reader.user_id, entry_ids=[entry.entry_id for entry in entries])
                    reader.read = True
            for item in mail_queue_due(channel=PUSH):  # a sender's pass
                push_process(item=item)
            manual.advance(1)
        server.shutdown()
        sent = [
            reader
            for reader in readers
            if any(line.channel == PUSH and line.outcome == SENT for line in ledger_of_user(user_id=reader.user_id))
        ]
        assert manual.now() - start >= RUN_SECONDS
        replied = sum(1 for reader in readers if feed_read(user_id=reader.user_id).entries)
        assert replied == people, f"only {replied} of {people} got their reply"
    quick = [reader for reader in sent if reader.read_at is not None and reader.read_at <= 60]
    return {
        "people": people,
        "sent": len(sent),
        "quick": len(quick),
        "share": len(quick) / max(1, len(sent)),
        "taken": len(service.delivered()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with bench_environment():
        for present_seconds, label in ((60, "with the presence rule (60 s)"), (0, "without it (every push at once)")):
            got = run(people=args.people, seed=args.seed, present_seconds=present_seconds)
            print(
                f"{label}: {got['sent']} of {got['people']} people pushed; "
                f"{got['quick']} of those read the reply within 60 s anyway: {got['share']:.0%} of pushes"
            )


if __name__ == "__main__":
    main()
