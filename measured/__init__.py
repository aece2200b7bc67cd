"""What was measured on the hardware, read for the tests and the docs' tables."""
