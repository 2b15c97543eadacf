"""videogen's HTTP API under /v1."""
