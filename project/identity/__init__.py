"""Who is calling, and what each app keeps about a person: log-in and its limits, sessions, API
tokens, two-factor log-ins, the devices a person logged in from, and the registry of what the
account's deletion erases and its export lists. A person's own account pages (settings, export,
deletion) are `social.account`."""
