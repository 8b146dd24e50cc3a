"""Spam defence (docs/how-to/moderate.md "Spam"): what happens to a comment before anyone sees it.

`screen.py` decides (watched words, then the spam check, then the author's level) whether a new
comment is published, held for review, blocked or flagged; `words.py` matches watched words
whatever the letter case, Unicode form, spacing and look-alike letters; `checks.py` is the
default spam check (no outside service); `held.py` keeps the staff queue of held comments
(relational, `HeldComment`); `models.py` the relational tables staff manage in the admin.
Approving a held comment publishes it with its notifications (actions/held.py).
"""
