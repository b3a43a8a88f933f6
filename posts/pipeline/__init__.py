"""The publishing pipeline (DESIGN.md §5): dispatcher, claim, publish attempt, outcomes, sweeper."""
