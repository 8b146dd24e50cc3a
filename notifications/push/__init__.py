"""Web Push, the third notification channel (docs/how-to/turn-on-push.md).

`keys.py` reads the site's VAPID key (RFC 8292); `services.py` / `selectors.py` keep each
person's browser subscriptions; `checks.py` re-checks a push at send time (what e-mail
re-checks); `content.py` says what a push carries and for how long; `sender.py` sends each
exactly once through the e-mail channel's queue and `sends` ledger (notifications/mail/).
"""
