"""Provider adapters: one module per video provider, all shaped by ``base.ProviderAdapter``."""
