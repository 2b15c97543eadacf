"""The API's resources, each as an async class (the sync client runs them on its own event loop)."""
