#!/usr/bin/env python
import os
import sys

from django.core.management import execute_from_command_line

from config import embedded

# Commands that never connect to a server: on the embedded default they start nothing.
SERVERLESS_COMMANDS = {"check", "help", "version", "--help", "--version", "-h"}

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command not in SERVERLESS_COMMANDS or "--database" in sys.argv:
        # With no DATABASE_URL / REDIS_URL: the embedded servers under var/, started if down.
        embedded.ensure_services()
    execute_from_command_line(sys.argv)
