"""When a dream runs: the gates, the idle monitor, the watermark state and the maintenance tick."""
