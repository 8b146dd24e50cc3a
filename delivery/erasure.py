"""What `delivery` keeps about a person: their pending broadcast targets (project/identity/erasure.py).

Delivered messages live in the person's feed (removed by the notifications step); a delivery's
counts (delivered, skipped) stay: staff's aggregate record.
"""

from __future__ import annotations

from delivery.services import delivery_targets_drop_for_user
from project.identity.erasure import erasure_step


@erasure_step(name="delivery_targets", order=50)
def delivery_targets_erase(*, user_id: str, cursor: str | None) -> str | None:
    """`delivery_targets_drop_for_user`, as the account's post_delete hook does: each pending
    target deleted with its chunk's `skipped` + 1 in one transaction (condition: it exists),
    so again after a crash nothing is counted twice."""
    delivery_targets_drop_for_user(user_id=user_id)
    return None
