"""The store's repositories: one per aggregate, each the only code that queries its collections.

A service asks a repository for what it needs by intent ("claim the due deliveries", "move this generation
to completed if it is still running") and gets typed records back; the documents, the query shapes and the
indexes that serve them stay here. ``indexes`` gathers every repository's indexes for the migration step."""
