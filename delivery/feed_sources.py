"""Where a delivered message's feed entry reads its text: the delivery item (found by
`autodiscover_modules("feed_sources")`, see notifications/feed/selectors.py)."""

from __future__ import annotations

from delivery.models import Delivery
from notifications.feed.selectors import FeedText, batch_get_by_key, feed_text_source


@feed_text_source("message")
def delivery_texts(delivery_ids: set[str]) -> dict[str, FeedText]:
    """Title, body and url of the deliveries that still exist (one BatchGetItem, 100 keys a call)."""
    deliveries = batch_get_by_key(Delivery, delivery_ids, ["delivery_id", "title", "body", "url"])
    return {
        delivery_id: FeedText(delivery.title, delivery.body, delivery.url or "")
        for delivery_id, delivery in deliveries.items()
    }
