"""The collector's version, used in the producer URI of every event."""

__version__ = "0.1.0"
PRODUCER = f"https://github.com/lineage-catalog/lineage-collector/tree/v{__version__}"
