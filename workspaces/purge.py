"""Removing a purged workspace's rows in bounded batches: never one transaction, nor one cascade
held in memory, however many rows it has.

**Which rows.** Every model whose rows Django's cascade would delete with the workspace: those
reached from :class:`~workspaces.models.Workspace` through foreign keys whose ``on_delete`` is
``CASCADE``, found in the models' ``_meta`` (so a table added tomorrow is purged the day it is
added). A model hanging off the workspace in several ways (a webhook delivery, by its webhook and
by its event) is emptied along each of them. Then the tables that keep a workspace's rows under
its id without a foreign key (a concrete field named ``workspace_id`` that is not a relation:
the idempotency records, the analytics rollups, which the triggers of the tracked posts write
while those are deleted, so they come after every other table). Not removed: the audit log and
the deletion job, which keep the workspace's id as ``workspace_ref`` on purpose.

**In which order.** A model is emptied before every model of the plan it refers to, whatever its
key's ``on_delete``: children before parents, so a batch of parents cascades into no child and
sets no child's key to null (a post before its recurring series). A key of a model to itself is
left to the cascade. Two models referring to each other would have no such order:
``graphlib.CycleError``, raised by the plan's test the day such keys are added (this module then
needs a rule saying which of the two goes first).

**How.** Per model and per way to the workspace, batches of ``WORKSPACE_PURGE_BATCH_SIZE`` rows,
each its own short transaction: the ids picked with ``FOR UPDATE SKIP LOCKED`` (two runs at once
share the work instead of waiting on each other), then deleted through the ORM (signals sent,
any row that appeared meanwhile cascaded). Nothing records progress: the rows left are the
progress, so a run that dies midway is finished by the next one, and a run over an empty
workspace deletes nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from graphlib import TopologicalSorter
from typing import Any

from django.apps import apps
from django.db import models, transaction

from workspaces.models import Workspace

logger = logging.getLogger(__name__)

WORKSPACE_ID_FIELD = "workspace_id"


@dataclass(frozen=True)
class Step:
    """One table of the plan and the lookups (``post__workspace``) that find a workspace's rows in it."""

    model: type[models.Model]
    lookups: tuple[str, ...]


def _cascading_relations(model: type[models.Model]) -> list[Any]:
    """The relations of other models' foreign keys to ``model`` (as Django's deletion collector
    finds them, hidden ones included)."""
    return [
        field
        for field in model._meta.get_fields(include_hidden=True)
        if field.auto_created and not field.concrete and (field.one_to_one or field.one_to_many)
    ]


def _owned_models() -> dict[type[models.Model], list[str]]:
    """Every model a workspace's deletion cascades into, with each lookup from it to the workspace."""
    lookups: dict[type[models.Model], list[str]] = {}
    pending: list[tuple[type[models.Model], str, tuple[type[models.Model], ...]]] = [(Workspace, "", (Workspace,))]
    while pending:
        parent, parent_lookup, path = pending.pop(0)
        for relation in _cascading_relations(parent):
            child = relation.related_model
            if relation.on_delete is not models.CASCADE or child in path:
                continue
            lookup = relation.field.name + (f"__{parent_lookup}" if parent_lookup else "")
            lookups.setdefault(child, []).append(lookup)
            pending.append((child, lookup, (*path, child)))
    return lookups


def _children_first(owned: list[type[models.Model]]) -> list[type[models.Model]]:
    sorter: TopologicalSorter[type[models.Model]] = TopologicalSorter()
    for model in owned:
        sorter.add(model)
        for field in model._meta.concrete_fields:
            target = field.related_model if field.is_relation else None
            if target is not None and target is not model and target in owned:
                sorter.add(target, model)  # ``target`` only once ``model`` is empty
    return list(sorter.static_order())


@cache
def purge_plan() -> tuple[Step, ...]:
    """The tables of a workspace's rows in the order they are emptied (see the module)."""
    owned = _owned_models()
    ordered = _children_first(sorted(owned, key=lambda model: model._meta.label))
    steps = [Step(model=model, lookups=tuple(owned[model])) for model in ordered]
    keyed_by_id = sorted(
        (
            model
            for model in apps.get_models()
            if model not in owned
            and any(f.attname == WORKSPACE_ID_FIELD and not f.is_relation for f in model._meta.concrete_fields)
        ),
        key=lambda model: model._meta.label,
    )
    steps += [Step(model=model, lookups=(WORKSPACE_ID_FIELD,)) for model in keyed_by_id]
    return tuple(steps)


def delete_batch(model: type[models.Model], lookup: str, workspace_id: str, size: int) -> int:
    """Delete up to ``size`` rows of ``model`` found by ``lookup`` in its own transaction; how many."""
    with transaction.atomic():
        ids = list(
            model._base_manager.filter(**{lookup: workspace_id})
            .order_by()
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", flat=True)[:size]
        )
        if ids:
            model._base_manager.filter(pk__in=ids).delete()
    return len(ids)


def workspace_rows_purge(*, workspace_id: str, batch_size: int) -> int:
    """Delete every row of the workspace but the workspace's own, table by table, ``batch_size``
    rows a transaction (see the module). Resumable and idempotent: a second run deletes what the
    first left, or nothing. Returns how many rows this run deleted."""
    deleted = 0
    for step in purge_plan():
        in_table = 0
        for lookup in step.lookups:
            while True:
                count = delete_batch(step.model, lookup, workspace_id, batch_size)
                in_table += count
                if count < batch_size:
                    break  # none left (or the rest held by a concurrent run, which deletes them)
        if in_table:
            logger.info(
                "workspace purge: %s rows of %s deleted",
                in_table,
                step.model._meta.label,
                extra={"workspace_id": workspace_id, "table": step.model._meta.db_table, "rows": in_table},
            )
        deleted += in_table
    return deleted
