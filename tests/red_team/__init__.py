"""Red-team tests: each performs an attack of issue 9 and asserts it is refused or detected."""
