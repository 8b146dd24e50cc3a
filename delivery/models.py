"""Tables of the `delivery` room (DESIGN.md 3)."""
