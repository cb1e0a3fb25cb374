"""The infrastructure: the eventsourcing application, how events and snapshots are stored
(transcodings, the hash chain, seals, recorders), keys, heads, and the audit of the store."""
