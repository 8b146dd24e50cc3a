"""Why was I notified, or not: the person's notification log (`GET /api/me/notification-log/`,
the page /me/notifications/log/), read from the `sends` ledger."""
