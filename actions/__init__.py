"""User actions that span apps, composed on top of them.

A like writes social's like row and counter and notifications' like event; a reply
writes social's comment and notifications' feed outbox. The apps below (`social`,
`notifications`, `delivery`) don't import each other upwards: only this package,
views, APIs and commands know several of them (tests/project/test_app_graph.py).
"""
