"""The embedded default backend: CPU, no network, models that ship inside PyPI packages."""
