"""Models of the platforms app."""
