"""Red-team tests: each performs one attack of issue 9 against the ledger and checks it fails."""
