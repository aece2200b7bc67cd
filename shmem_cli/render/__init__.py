"""Renderers: functions from the result model to strings. No I/O here."""
