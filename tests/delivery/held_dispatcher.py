"""`manage.py dispatch_deliveries` that holds still after its first batch until the test lets it go.

Run as `python -m tests.delivery.held_dispatcher <marker> <command options>`: once the first
batch is delivered it creates `<marker>.held` and waits for `<marker>.go`. A test signals the
process while it is held, so "stopped half way" does not depend on how fast a busy machine
runs the rest. A fault injected from outside; the product has no hook for it.
"""

import os
import sys
import time
from pathlib import Path


def main(marker: Path, options: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import execute_from_command_line

    from delivery import batches

    real, depth, held = batches.targets_deliver, 0, False

    def targets_deliver(**kwargs):
        nonlocal depth, held
        depth += 1  # a batch that splits itself calls back in: hold after the whole batch
        try:
            result = real(**kwargs)
        finally:
            depth -= 1
        if depth == 0 and not held:
            held = True
            marker.with_suffix(".held").touch()
            while not marker.with_suffix(".go").exists():
                time.sleep(0.01)
        return result

    batches.targets_deliver = targets_deliver
    execute_from_command_line(["manage.py", "dispatch_deliveries", *options])


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
