"""videogen's orchestrator: drives each generation from request to completed or failed."""
