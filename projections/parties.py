"""Registered parties (§80.1450), and the map from aggregate id to 4-digit company id."""

from __future__ import annotations

import json
from typing import Any

from projections.batch import Batch
from projections.schema import Table

PARTIES = Table(
    "parties",
    "Every registered party, with the id of its aggregate in the event store.",
    {
        "party": (str, "4-digit company id"),
        "name": (str, "registered name"),
        "roles": (str, "roles, as a JSON list"),
        "facilities": (str, "5-digit facility ids, as a JSON list"),
        "originator_id": (str, "the Party aggregate's id in the event store"),
        "notification_id": (int, "position of the registration in the notification log"),
    },
    pk=("party",),
    indexes=(("originator_id",),),
)
TABLES = (PARTIES,)


def register(notification_id: int, event: Any, batch: Batch) -> None:
    batch.add(PARTIES, (
        event.party_id, event.name, json.dumps(list(event.roles)),
        json.dumps(list(event.facilities)), str(event.originator_id), notification_id,
    ))

