"""The per-user feed (docs/explanation/feed.md "The feed"): replies, delivered messages and
notices, one DynamoDB item a user, written under optimistic locking.

encoding   how entries are stored: packed records, and the PynamoDB attributes of `Feed`
events     `FeedEvent`: something that happened for a user, validated; its entry id and retry key
merge      applying an event to a feed already read (merge, roll up, cap), without I/O
services   writes: append an event, mark read, the retry worker
selectors  reads: a feed, its entries with their text, the retries due
apis       `GET /api/feed/`

The tables (`Feed`, `FeedRetry`) are declared in notifications/models.py with the app's others.
"""
