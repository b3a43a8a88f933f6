"""Recurring series (spec §2 "Recurring post", CONTRACT.md §6): the rule (``rules``), the writes
(``services``), the reads (``selectors``) and the record (``rendering``).

The posts services call :func:`~posts.recurrence.services.series_start` while creating the first
post of a series and :func:`~posts.recurrence.services.upcoming_post_deleted` before deleting a
post of a series; the pipeline hooks call ``series_occurrences_claimed`` and
``series_post_finished``; accounts call ``series_account_removed``: each imported from
``posts.recurrence.services``, so that loading ``posts.recurrence.input`` for the payload shapes
loads no service."""
