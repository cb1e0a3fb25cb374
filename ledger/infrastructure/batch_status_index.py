"""Which batches have a status record (QAP verification or lock, ledger/domain/batch_status.py),
as of a position in the log: as for invalidation records, almost every batch has none, so every
transfer, separation and retirement answers "is this batch locked, what is its QAP status?"
from memory rather than with one store read per batch.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.batch_status import BatchStatus
from ledger.infrastructure.invalidation_index import InvalidationIndex


class BatchStatusIndex(InvalidationIndex):
    """The ids of the `BatchStatus` records opened up to `position` in the log."""

    OPENED: type[Any] = BatchStatus.Opened
