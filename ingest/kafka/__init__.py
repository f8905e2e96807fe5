"""Kafka ingest: ``manage.py consume_kafka`` reads OpenLineage and metadata topics and
stores what it reads through the same pipeline as HTTP ingest (ADR 0062).

``config`` reads the LINEAGE_KAFKA_* settings, ``messages`` turns one message into a
record or a refusal, ``storage`` stores a batch, ``consumer`` runs the loop and commits
offsets only after the batch is stored, ``lag`` reports and reads partition lag,
``health`` serves the consumer's probes and metrics, ``replay`` retries dead letters and
``mock`` starts librdkafka's mock cluster for tests and ``make run``.
"""
