# The admin shows instants as the dashboard and the logs do (UTC, 24-hour clock): shorter than
# Django's "Nov. 27, 2026, 9:39 a.m.", so a list's columns fit a 1400 px window.
DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
