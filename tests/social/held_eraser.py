"""`manage.py erase_accounts` that holds still in the middle of the likes step until killed.

Run as `python tests/social/held_eraser.py` with HELD_MARKER=<path> and HOLD_AFTER=<n> in the
environment: after its n-th like undone (the middle of a page: the likes before it in the page
are undone, the page's progress not stored yet) it creates the marker and waits; the test kills
it with SIGKILL there, so "killed half way" does not depend on how fast a busy machine runs. A
fault injected from outside; the product has no hook for it.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import execute_from_command_line

    from actions import erasure

    real, done = erasure.like_erase, 0  # type: ignore[attr-defined]  # the name the likes step calls
    marker, hold_after = Path(os.environ["HELD_MARKER"]), int(os.environ["HOLD_AFTER"])

    def like_erase(**kwargs):
        nonlocal done
        real(**kwargs)
        done += 1
        if done == hold_after:
            marker.touch()
            while True:
                time.sleep(0.01)

    erasure.like_erase = like_erase  # type: ignore[attr-defined]
    execute_from_command_line(["manage.py", "erase_accounts"])


if __name__ == "__main__":
    main()
