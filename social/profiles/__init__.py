"""A person's public page: who they are and what they wrote."""
