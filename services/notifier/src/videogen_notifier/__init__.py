"""videogen's notifier: signed webhook deliveries, at least once."""
