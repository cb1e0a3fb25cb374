"""Acceptance cases written from the regulation\x27s text, paragraph by paragraph."""
