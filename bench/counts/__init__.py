"""Instruction and statement counts that load does not move (valgrind's callgrind, pg_stat_statements)."""
