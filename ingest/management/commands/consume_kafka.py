"""manage.py consume_kafka: read the configured Kafka topics into the raw event log.

Configured by LINEAGE_KAFKA_BOOTSTRAP_SERVERS, LINEAGE_KAFKA_TOPICS, LINEAGE_KAFKA_GROUP_ID
and LINEAGE_KAFKA_<SETTING> (docs/ingest.md); exits with a message saying what is missing
when they are not set, naming the variable when one holds what librdkafka or the consumer
does not take, and with one line naming the port and the setting that moves it when its
probe port cannot be opened (each with exit status 78, EX_CONFIG: starting it again would
not help, and ``make run`` does not). SIGTERM (or Ctrl-C) stores and commits the batch in
hand, then leaves the group.
"""

import math
import signal
import threading
from typing import Any

from confluent_kafka import KafkaException
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_output import RedactedOutput
from core.heap import freeze_startup_heap
from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.health import CannotListen, serve

# sysexits.h's EX_CONFIG: the configuration keeps this process from starting, so a
# supervisor (make run's) does not start it again; scripts/run_local.py says the same.
CANNOT_START = 78


class Command(RedactedOutput, BaseCommand):
    help = "Consume OpenLineage and metadata records from Kafka topics into the event log."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--exit-when-idle",
            type=float,
            default=None,
            metavar="SECONDS",
            help="Exit once no message has arrived for this long (a drain, a benchmark).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        idle = options["exit_when_idle"]
        if idle is not None and not (idle > 0 and math.isfinite(idle)):
            # nan never compares as idle long enough (it consumed for ever), <= 0 at once.
            raise CommandError(f"--exit-when-idle must be a number of seconds above 0 (got {idle})")
        try:
            config = kafka_config.load()
        except kafka_config.KafkaNotConfigured as error:
            raise CommandError(str(error), returncode=CANNOT_START) from error
        stop = threading.Event()
        try:
            consumer = IngestConsumer(config, stop)
        except KafkaException as error:
            # A misspelt LINEAGE_KAFKA_<SETTING>, or a value librdkafka does not take: a
            # traceback before; starting again would not help either.
            raise CommandError(
                kafka_config.refused_by_librdkafka(error), returncode=CANNOT_START
            ) from error
        for signal_number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signal_number, lambda *_: stop.set())
        if config.port:
            try:
                serve(consumer, config.port, config.host)
            except CannotListen as error:
                consumer.consumer.close()
                raise CommandError(str(error), returncode=CANNOT_START) from error
        # After start-up, before the loop: a batch's parse allocates fast enough to make the
        # collector traverse whatever is not frozen, again and again (core/heap.py).
        freeze_startup_heap()
        topics = ", ".join(f"{topic} ({kind})" for topic, kind in config.topics.items())
        self.stdout.write(f"consuming {topics} as group {config.group_id!r}")
        consumer.run(exit_when_idle=options["exit_when_idle"])
        self.stdout.write(f"stopped after {consumer.stored_messages} messages")
