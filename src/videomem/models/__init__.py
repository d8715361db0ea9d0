"""Model protocols, the registry that builds them from profiles, and the backends."""
