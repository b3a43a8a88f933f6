"""The scenarios, in the order ``make bench`` runs them."""
