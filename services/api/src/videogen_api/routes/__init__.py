"""HTTP handlers, one module per resource."""
