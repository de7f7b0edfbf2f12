"""The features: scan, clean, and the commands on top of the engine and the report."""
