"""The output formats of check reports (lint, verify): text, JSON, GitHub, SARIF, JUnit,
registered once in ``formats``."""
