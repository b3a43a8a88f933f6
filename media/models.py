"""Models of the media app."""
