"""Notification e-mail, sent exactly once (docs/explanation/email.md).

`queue.py` schedules a mail inside another write's transaction; `sender.py` claims due
mails, re-checks them at send time and records each in the `sends` ledger; `digest.py`
sends the daily and weekly digests through the same ledger; `tokens.py` signs the
unsubscribe and verification links.
"""
