"""Webhook notifications of catalog changes (ADR 0086, docs/notifications.md).

``outbox`` is the one seam derivation calls (inside its transaction) with the change rows
it wrote; ``delivery`` claims, sends and records tries, sweeps and replays; ``sender`` is
the bounded HTTP POST to an address ``addresses`` checked; ``signing`` the signature.
"""
