"""librdkafka's mock cluster for the tests, one whose consumer groups form at once.

``python -m tests.ingest.kafka.prompt_mock [--topic NAME ...]`` prints
``bootstrap=HOST:PORT`` and runs until terminated, as ``python -m ingest.kafka.mock`` does
(``make run`` and its tests still start that one), with one difference: a consumer group
with no members is formed as soon as its first member joins. The mock, like a broker with
``group.initial.rebalance.delay.ms`` at its default, waited 3 s first, for more members
that never came: every test's first consumer of a new group (about 40 in the suite) sat 3 s
before its first message. The C API sets that delay (``rd_kafka_mock_group_initial_
rebalance_delay_ms``), not a configuration property, so the cluster is made here through
ctypes on the librdkafka confluent-kafka loads. Nothing a test proves depends on the delay:
a group with members (a second consumer, a member killed) rebalances as before, after
every member rejoined or its session timed out.
"""

import argparse
import ctypes
import ctypes.util
import signal
import threading
from pathlib import Path

import confluent_kafka

PARTITIONS = 4  # what the mock gives a topic created on first use


def librdkafka() -> ctypes.CDLL:
    """The librdkafka confluent-kafka runs on: the wheel's own copy, else the system's."""
    bundled = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    found = sorted(bundled.glob("librdkafka*.so*")) or [ctypes.util.find_library("rdkafka")]
    if found[0] is None:
        raise SystemExit("librdkafka is not found")
    lib = ctypes.CDLL(str(found[0]))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, *[ctypes.c_char_p] * 3, ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_handle_mock_cluster.restype = ctypes.c_void_p
    lib.rd_kafka_handle_mock_cluster.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.rd_kafka_mock_topic_create.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_int,
    ]
    return lib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--topic", action="append", default=[])
    options = parser.parse_args()
    lib = librdkafka()
    error = ctypes.create_string_buffer(512)
    # A producer handle (type 0) that owns the cluster, made as ingest.kafka.mock makes it;
    # it lives as long as this process.
    conf = lib.rd_kafka_conf_new()
    for name, value in (
        ("bootstrap.servers", "127.0.0.1:1"),
        ("test.mock.num.brokers", "1"),
        ("log_level", "4"),  # not the notice that the address was replaced
    ):
        if lib.rd_kafka_conf_set(conf, name.encode(), value.encode(), error, len(error)) != 0:
            raise SystemExit(f"librdkafka: {error.value.decode()}")
    owner = lib.rd_kafka_new(0, conf, error, len(error))
    if not owner:
        raise SystemExit(f"librdkafka: {error.value.decode()}")
    cluster = lib.rd_kafka_handle_mock_cluster(owner)
    if not cluster:
        raise SystemExit("the mock cluster did not start")
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms(cluster, 0)
    for topic in options.topic:
        if lib.rd_kafka_mock_topic_create(cluster, topic.encode(), PARTITIONS, 1) != 0:
            raise SystemExit(f"topic {topic} was not created")
    print(f"bootstrap={lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    while not stopped.wait(0.5):
        pass


if __name__ == "__main__":
    main()
