"""``step.each``: the per-item loop of every step kind's prepare and write."""

import logging

import pytest

from posts.pipeline import step


def test_an_item_that_raises_stops_none_of_the_others(caplog: pytest.LogCaptureFixture) -> None:
    errors: list[BaseException] = []

    def handle(n: int) -> int | None:
        if n == 2:
            raise ValueError("two")
        return None if n == 3 else n * 10

    with caplog.at_level(logging.ERROR, logger=step.__name__):
        results = step.each([1, 2, 3, 4], handle, errors=errors, name=lambda n: f"item {n}")

    assert results == [10, 40]  # what raised and what gave None are left out, in order otherwise
    assert [str(e) for e in errors] == ["two"]
    assert [r.getMessage() for r in caplog.records] == ["item 2 raised"]
    assert caplog.records[0].exc_info is not None


def test_errors_already_kept_are_added_to() -> None:
    first = RuntimeError("earlier")
    errors: list[BaseException] = [first]

    def fail(n: int) -> None:
        raise KeyError(n)

    assert step.each([7], fail, errors=errors, name=str) == []
    assert errors[0] is first and isinstance(errors[1], KeyError)
