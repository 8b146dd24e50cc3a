"""The account settings page (display name, e-mail address and its verification)."""
