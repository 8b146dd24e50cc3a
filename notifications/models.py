"""Tables of the `notifications` room (DESIGN.md 3)."""
