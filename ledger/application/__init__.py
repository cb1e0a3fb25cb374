"""The application: command handlers that orchestrate the aggregates, the unit of work,
idempotency by command id, and the `Ledger` façade the CLI and services use."""
