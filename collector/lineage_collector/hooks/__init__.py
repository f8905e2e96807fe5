"""Capture hooks; each one only reads the current job and queues a tuple."""
