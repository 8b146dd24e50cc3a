"""One run of a delivery, as `manage.py dispatch_deliveries` makes it: prepare it if that is not
done yet, then N dispatchers in threads of this process until it is done (delivery/dispatch.py).

Every step is the exactly-once machinery's own (preparation resumes where it stopped, chunks are
claimed with an expiring lease), so a run killed at any instant, run again, or run on several
machines at once delivers each target once: a re-run resumes, and takes over the chunks whose
lease expired. A stop (`should_stop`) finishes each dispatcher's current batch and releases its
chunk for others.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from delivery import dispatch, preparation, selectors
from delivery.models import DISPATCHING, DRAFT, FINAL_STATUSES, PREPARING, READY
from delivery.selectors import DeliveryProgress
from project.clock import clock
from project.errors import NotFound

logger = logging.getLogger("delivery.dispatch")


@dataclass
class DeliveryRun:
    """What one run did: `progress` after it (None when there was nothing to dispatch)."""

    delivery_id: str
    progress: DeliveryProgress | None = None
    delivered: int = 0  # by this run
    failures: list[str] = field(default_factory=list)  # what could not be recovered (exit status 1)


def delivery_run(
    *,
    delivery_id: str,
    workers: int,
    batch_size: int,
    lease_seconds: float,
    should_stop: Callable[[], bool],
    on_start: Callable[[DeliveryProgress], None] = lambda progress: None,
    on_delivered: Callable[[int], None] = lambda count: None,
) -> DeliveryRun:
    """Prepare (if needed) and dispatch `delivery_id` with `workers` dispatchers; `on_start` hears
    of its progress before they start, `on_delivered` of each batch (from their threads).

    Twice, concurrently, or after a run that died: see the module's docstring. A dispatcher
    that fails is logged and reported; its chunk's lease expires and another takes it over.
    """
    run = DeliveryRun(delivery_id=delivery_id)
    try:
        delivery = selectors.delivery_get_consistent(delivery_id=delivery_id)
    except NotFound:
        run.failures.append(f"no delivery {delivery_id}")
        return run
    if delivery.status in (DRAFT, PREPARING):
        logger.info("delivery %s: preparing (%s audience)", delivery_id, delivery.audience_kind)
        delivery = preparation.delivery_prepare(delivery_id=delivery_id, should_stop=should_stop)
    if delivery.status not in (READY, DISPATCHING):
        if delivery.status in FINAL_STATUSES:
            logger.info("delivery %s is %s", delivery_id, delivery.status)
        return run
    on_start(selectors.delivery_progress(delivery=delivery))
    lock = threading.Lock()
    prefix = f"{socket.gethostname()}:{os.getpid()}"

    def dispatcher(number: int) -> None:
        try:
            report = dispatch.delivery_dispatch(
                delivery_id=delivery_id,
                owner=f"{prefix}:{number}",
                batch_size=batch_size,
                lease_seconds=lease_seconds,
                should_stop=should_stop,
                on_delivered=on_delivered,
            )
            with lock:
                run.delivered += report.delivered
                if report.unfinished_chunks:
                    run.failures.append(
                        f"delivery {delivery_id}: {report.unfinished_chunks} chunk(s) kept conflicting "
                        "(left for the next run)"
                    )
        except Exception as error:  # the chunk's lease expires and another dispatcher takes it over
            logger.exception("delivery %s: dispatcher %s failed", delivery_id, number)
            with lock:
                run.failures.append(f"delivery {delivery_id}: dispatcher {number} failed: {error}")

    started = clock.monotonic()
    threads = [
        threading.Thread(target=dispatcher, args=(n,), name=f"dispatch-{n}", daemon=True) for n in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=0.2)  # the calling (main) thread stays responsive to SIGTERM
    elapsed = clock.monotonic() - started
    run.progress = selectors.delivery_progress(delivery=selectors.delivery_get_consistent(delivery_id=delivery_id))
    logger.info(
        "delivery %s: %s; %d delivered by this run in %.1fs (%d/s); %d/%d delivered in all, %d skipped",
        delivery_id,
        run.progress.delivery.status,
        run.delivered,
        elapsed,
        run.delivered / elapsed if elapsed else 0,
        run.progress.delivered,
        run.progress.total,
        run.progress.skipped,
    )
    return run
