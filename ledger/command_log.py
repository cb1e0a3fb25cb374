"""Applied command ids: a command id makes a transaction-file line idempotent.

A `CommandRecord` aggregate with a uuid5 id of the client's command id is saved in the same
transaction as the command's events, so a second save of the same id fails atomically.
"""

from __future__ import annotations

from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

COMMAND_NAMESPACE = uuid5(NAMESPACE_URL, "https://rin-ledger/command")


class CommandRecord(Aggregate):
    """The fact that the command with this client id was applied, and its content digest."""

    TOPIC = "rin_ledger:CommandRecord"

    class Event(Aggregate.Event):
        TOPIC = "rin_ledger:CommandRecord.Event"

    class Created(Event, Aggregate.Created):
        """The library's base creation event; records are created by `Applied`."""

        TOPIC = "rin_ledger:CommandRecord.Created"

    class Applied(Aggregate.Created):
        TOPIC = "rin_ledger:CommandRecord.Applied"
        client_id: str
        digest: str

    def __init__(self, client_id: str, digest: str) -> None:
        self.client_id = client_id
        self.digest = digest

    @staticmethod
    def create_id(client_id: str) -> UUID:
        return uuid5(COMMAND_NAMESPACE, client_id)

    @classmethod
    def applied(cls, client_id: str, digest: str) -> CommandRecord:
        return cls._create(
            cls.Applied, id=cls.create_id(client_id), client_id=client_id, digest=digest
        )
