"""The `rin` command line: the one place that imports both the ledger and `projections`."""
