"""Models of the posts app."""
