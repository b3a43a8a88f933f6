"""Models of the analytics app."""
