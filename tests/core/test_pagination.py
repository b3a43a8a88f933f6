from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.pagination import OffsetQuery, paginate
from tests.factories import WorkspaceFactory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("limit", "offset", "names", "has_more"),
    [
        (2, 0, ["w0", "w1"], True),
        (2, 2, ["w2", "w3"], True),
        (2, 4, ["w4"], False),
        (20, 0, None, False),
        (5, 9, [], False),
    ],
)
def test_pages_total_and_has_more(limit, offset, names, has_more):
    for index in range(5):
        WorkspaceFactory(name=f"w{index}")
    with CaptureQueriesContext(connection) as queries:
        page = paginate(Workspace.objects.order_by("name"), limit=limit, offset=offset)
    assert [w.name for w in page.items] == (names if names is not None else [f"w{i}" for i in range(5)])
    assert (page.total, page.has_more) == (5, has_more)
    assert len(queries) <= 2


@pytest.mark.parametrize(
    ("query", "error"),
    [({"limit": "0"}, "limit"), ({"limit": "101"}, "limit"), ({"offset": "-1"}, "offset"), ({"limit": "x"}, "limit")],
)
def test_offset_query_bounds(query, error):
    serializer = OffsetQuery(data=query)
    assert not serializer.is_valid()
    assert list(serializer.errors) == [error]
    defaults = OffsetQuery(data={})
    assert defaults.is_valid()
    assert defaults.validated_data == {"limit": 20, "offset": 0}
