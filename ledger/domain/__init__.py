"""The domain: RIN identity, holdings and fuel as value objects, and the aggregates (`Party`,
`BatchInvalidation`) whose command methods apply the rules of `ledger.rules`. Imports nothing
from the application, the infrastructure or eventsourcing's persistence."""
