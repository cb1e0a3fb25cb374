"""The chain head a regulator's report was computed at (§80.1451 reports are certified): the
ledger-wide head after the report's last notification, so that `rin verify --against` can prove
later that nothing the report rests on changed. A head row stored by the transaction that ended
there is used as it is (with its signature, on a signed store); else the head is recomputed."""

from __future__ import annotations

from typing import Any

from ledger.application.ledger import Ledger


def head_at(ledger: Ledger, position: int) -> dict[str, Any]:
    """`{"notification_id", "hash"}` (and `key`, `signature` when stored signed) after
    notification `position`."""
    for stored in ledger.stored_heads():
        if stored.notification_id == position:
            return stored.to_dict()
        if stored.notification_id > position:
            break
    return ledger.head(position)
