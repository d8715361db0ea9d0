"""The embedded default backend: CPU, no network, models that ship inside PyPI packages."""

from videomem.config import RoleConfig
from videomem.errors import ConfigError


def require_no_options(cfg: RoleConfig, role: str) -> None:
    """The offline backend has fixed, documented thresholds; a silently ignored option would mislead."""
    if cfg.options:
        raise ConfigError(f"{role}.options: the offline backend takes no options (got {sorted(cfg.options)})")
