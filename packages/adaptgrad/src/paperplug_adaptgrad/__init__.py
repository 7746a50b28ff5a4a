"""TODO: the method in one line (paper, venue)."""
