"""Running test code on several threads at the same instant, each with its own database
connection: what the race tests of every app share."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections


def run_concurrently(functions: list[Callable[[], Any]], *, timeout: float = 60.0) -> list[Any]:
    """Start every function at the same instant, each on its own thread and connection (closed
    when it returns). Returns, in order, what each returned or the exception it raised (a
    thread's exception is otherwise lost: the caller asserts on it)."""
    barrier = threading.Barrier(len(functions))
    results: list[Any] = [None] * len(functions)

    def runner(index: int, function: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=timeout)
            results[index] = function()
        except BaseException as exc:  # returned to the test
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=runner, args=(i, f)) for i, f in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return results


def raised(results: list[Any]) -> list[BaseException]:
    """The exceptions among :func:`run_concurrently`'s results."""
    return [result for result in results if isinstance(result, BaseException)]
