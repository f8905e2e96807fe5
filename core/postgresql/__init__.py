"""Django's PostgreSQL backend, with a kept connection that PostgreSQL closed replaced
before a request uses it (``base.DatabaseWrapper``; the settings' ENGINE names it)."""
