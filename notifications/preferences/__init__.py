"""What reaches a person: notification preferences per kind and channel, the digest, and the
threads they muted or watched (docs/explanation/feed.md "Preferences and threads")."""
