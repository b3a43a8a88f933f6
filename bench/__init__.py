"""Benchmarks (issue 10): ``make bench [SCENARIO=name]`` starts a dedicated stack (its own
PostgreSQL database, Redis, gunicorn, Celery worker and beat, and the sandbox platforms in a
separate gunicorn), seeds data with bulk SQL, runs the scenarios and prints one table each
(also written to ``var/bench/<scenario>.json``). Figures are ratios and distributions taken
in one run: the machines are shared and noisy. Nothing here is imported by the apps."""
