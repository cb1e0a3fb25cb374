"""The server-side half of a PostgreSQL save: one PL/pgSQL function that takes the writers'
table lock, reads what the save's refusals need, and inserts the events and NOTIFYs only if
none applies, so that a refused save consumes no notification id (ids stay gapless) and the
whole of it is one statement, one round trip (docs/postgres.md).

The refusals it decides (the client raises each with its own message from what it returns,
ledger/infrastructure/postgres_recorder.py): an aggregate the save only read moved
(ledger/infrastructure/read_check.py); the store's last head is signed by a key the writer
lacks, or its tail was deleted (ledger/infrastructure/heads.py); a command id is stored
(ledger/infrastructure/command_table.py); an event's (aggregate, version) is stored, the
library's own conflict, checked before the insert instead of by the primary key after it.
"""

from __future__ import annotations

#: the function's name carries its version: a changed body is a new function, created beside
#: the old by `create_statement` when a store is opened (ledger/infrastructure/postgres_setup.py)
VERSION = 1
NAME = f"rin_save_v{VERSION}"

#: what the function returns, in this order (one row)
RESULT = ("refused", "last_stored", "head_id", "head_hash", "head_key", "latest_ids",
          "latest_versions", "taken", "command_id", "command_chain", "ids")


def create_statement(schema: str, events: str, heads: str, commands: str, channel: str) -> str:
    """`CREATE OR REPLACE FUNCTION` of the save in `schema` over its tables (unqualified names)
    and NOTIFY `channel`; run at every open, under the set-up lock, so an existing store gets
    it."""
    s = f'"{schema}"'
    return f"""
CREATE OR REPLACE FUNCTION {s}.{NAME}(
    read_ids uuid[], read_versions bigint[], client_ids text[], writer_key text,
    e_ids uuid[], e_versions bigint[], e_topics text[], e_states bytea[],
    OUT refused text, OUT last_stored bigint, OUT head_id bigint, OUT head_hash text,
    OUT head_key text, OUT latest_ids uuid[], OUT latest_versions bigint[], OUT taken text,
    OUT command_id bigint, OUT command_chain text, OUT ids bigint[])
LANGUAGE plpgsql AS $fn$
BEGIN
    LOCK TABLE {s}."{events}" IN EXCLUSIVE MODE;
    SELECT array_agg(l.i), array_agg(l.v) INTO latest_ids, latest_versions FROM (
        SELECT originator_id AS i, max(originator_version) AS v FROM {s}."{events}"
        WHERE originator_id = ANY(read_ids) GROUP BY originator_id) AS l;
    SELECT h.notification_id, h.hash, h.key INTO head_id, head_hash, head_key
        FROM {s}."{heads}" AS h ORDER BY h.notification_id DESC LIMIT 1;
    SELECT coalesce(max(notification_id), 0) INTO last_stored FROM {s}."{events}";
    SELECT c.client_id INTO taken FROM {s}."{commands}" AS c
        WHERE c.client_id = ANY(client_ids) LIMIT 1;
    SELECT c.notification_id, c.chain INTO command_id, command_chain
        FROM {s}."{commands}" AS c ORDER BY c.notification_id DESC LIMIT 1;
    IF EXISTS (SELECT 1 FROM unnest(read_ids, read_versions) AS r(i, v)
               LEFT JOIN unnest(latest_ids, latest_versions) AS l(i, v) ON l.i = r.i
               WHERE coalesce(l.v, 0) <> r.v) THEN
        refused := 'moved';
    ELSIF head_key IS NOT NULL AND writer_key IS DISTINCT FROM head_key THEN
        refused := 'key';
    ELSIF last_stored < coalesce(head_id, 0) THEN
        refused := 'truncated';
    ELSIF taken IS NOT NULL THEN
        refused := 'taken';
    ELSIF EXISTS (SELECT 1 FROM unnest(e_ids, e_versions) AS e(i, v)
                  JOIN {s}."{events}" AS t
                  ON t.originator_id = e.i AND t.originator_version = e.v) THEN
        refused := 'conflict';
    END IF;
    IF refused IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pg_notify('{channel}', '');
    WITH inserted AS (
        INSERT INTO {s}."{events}" (originator_id, originator_version, topic, state)
        SELECT i, v, t, st FROM unnest(e_ids, e_versions, e_topics, e_states)
            WITH ORDINALITY AS e(i, v, t, st, n) ORDER BY n
        RETURNING notification_id)
    SELECT array_agg(notification_id ORDER BY notification_id) INTO ids FROM inserted;
END
$fn$"""


def call_statement(schema: str) -> str:
    """The call of the function, its eight arguments sent in binary."""
    return (f'SELECT {", ".join(RESULT)} FROM "{schema}".{NAME}(%b::uuid[], %b::bigint[], '
            "%b::text[], %b::text, %b::uuid[], %b::bigint[], %b::text[], %b::bytea[])")
