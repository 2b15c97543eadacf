"""Where an outgoing request to a customer-given URL may connect: webhook deliveries (the notifier) and first
frames fetched from a URL (the orchestrator) go through the same guard."""
