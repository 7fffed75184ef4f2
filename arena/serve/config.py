"""What ``arena serve`` is set to: addresses, the match-port range and the
limits, from defaults, then ``serve.toml``, then the command line. One frozen
value, so that every part of the service reads the same limits."""

from __future__ import annotations

import dataclasses
import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["ServeConfig", "ConfigError", "load_config", "parse_port_range"]

#: The default data directory, relative to where the service starts.
DEFAULT_DATA: Final = Path("arena-data")


class ConfigError(ValueError):
    """A ``serve.toml`` or option value that cannot be used; ``str()`` is the one line to print."""


@dataclass(frozen=True)
class ServeConfig:
    """The service's settings. Times are seconds unless named ``_ms`` (the
    dealer's own limits, in its unit)."""

    data: Path = DEFAULT_DATA
    host: str = "127.0.0.1"
    port: int = 8000
    #: What the API answers as a match's ``host`` (where agents connect); default: ``host``.
    public_host: str | None = None
    match_ports: tuple[int, int] = (9000, 9999)
    #: Whom a match port lets in besides the seat's secret key, which it always
    #: asks for: ``"asker"`` (the address that asked for the match), ``"any"``
    #: (the compose stack, where every agent comes from Docker's gateway), or
    #: one fixed address.
    allow: str = "asker"
    start_timeout_s: float = 60.0
    #: Warm the hosted bots that compile numba kernels when the service starts
    #: (:mod:`arena.serve.warming`); false: each before its first match only.
    warm_bots: bool = True
    max_matches_per_user: int = 4
    max_matches: int = 200
    max_queued: int = 1000
    max_hands: int = 10000
    requests_per_minute: int = 600
    max_body_bytes: int = 16384
    #: The largest archive a user may upload as an agent (``POST /api/agents``: received to disk, never whole in memory).
    max_agent_bytes: int = 50 << 20
    max_log_bytes_per_user: int = 1 << 30
    #: Free bytes the data directory's disk keeps: below them a new match is refused (507).
    min_free_bytes: int = 100 << 20
    #: Hands a user's agent plays against a bot before the leaderboard ranks it.
    min_rank_hands: int = 1000
    #: How long a web login (its session cookie) lasts.
    session_lifetime_s: float = 7 * 24 * 3600.0
    t_response_ms: int = 10000
    t_hand_ms: int = 60000
    t_per_hand_ms: int = 7000
    #: The address of a TLS-terminating proxy in front of the service: its
    #: ``X-Forwarded-Proto: https`` makes the session cookie ``Secure`` (from
    #: anyone else the header is ignored, as any client could send it).
    tls_proxy: str | None = None
    #: [web hook] Where tournaments run: a Dask scheduler (``tcp://HOST:8786``); None: a local pool.
    dask: str | None = None

    @property
    def advertised_host(self) -> str:
        return self.public_host if self.public_host is not None else self.host


_FIELDS: Final = {field.name: field for field in dataclasses.fields(ServeConfig)}


def parse_port_range(text: str) -> tuple[int, int]:
    """``LO-HI`` as two ports, ``LO <= HI``.

    Raises:
        ConfigError: not a range of ports.
    """
    low, dash, high = text.partition("-")
    try:
        lo, hi = int(low), int(high)
    except ValueError:
        raise ConfigError(f"not a port range LO-HI: {text!r}") from None
    if not dash or not 1 <= lo <= hi <= 65535:
        raise ConfigError(f"not a port range LO-HI with 1 <= LO <= HI <= 65535: {text!r}")
    return lo, hi


def _value(name: str, value: Any, default: Any) -> Any:
    if name == "match_ports":
        return parse_port_range(value) if isinstance(value, str) else _value("match_ports", f"{value}", None)
    if name == "data":
        if not isinstance(value, str):
            raise ConfigError(f"data: not a path: {value!r}")
        return Path(value)
    if name == "public_host":
        if not isinstance(value, str):
            raise ConfigError(f"public_host: not a host name: {value!r}")
        return value
    if name == "tls_proxy":
        try:
            return str(ipaddress.ip_address(value if isinstance(value, str) else ""))
        except ValueError:
            raise ConfigError(f"tls_proxy: the proxy's IP address, not {value!r}") from None
    if name == "dask":  # [web hook]
        if not isinstance(value, str) or not value:
            raise ConfigError(f"dask: not a scheduler address (tcp://HOST:8786): {value!r}")
        return value
    kind = type(default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not kind:
        raise ConfigError(f"{name}: expected {kind.__name__}, got {value!r}")
    if kind in (int, float) and value <= 0 and name != "port":
        raise ConfigError(f"{name}: must be positive, got {value!r}")
    return value


def load_config(path: Path | None, overrides: dict[str, Any]) -> ServeConfig:
    """The defaults, then the ``[serve]`` table of ``path`` (or its top level),
    then ``overrides`` (options given on the command line).

    Raises:
        ConfigError: an unreadable file, an unknown key or a value of the wrong kind.
    """
    values: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(path.read_text())
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not TOML: {error}") from None
        table = document.get("serve", document)
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [serve] is not a table")
        for key, value in table.items():
            name = key.replace("-", "_")
            if name not in _FIELDS:
                raise ConfigError(f"{path}: unknown setting {key!r}; known: {', '.join(sorted(_FIELDS))}")
            values[name] = _value(name, value, _FIELDS[name].default)
    values.update(overrides)
    config = ServeConfig(**values)
    if config.allow not in ("asker", "any"):
        try:
            ipaddress.ip_address(config.allow)
        except ValueError:
            raise ConfigError(f"allow: 'asker', 'any' or an IP address, not {config.allow!r}") from None
    lo, hi = config.match_ports
    if hi - lo + 1 < 2:
        raise ConfigError(f"match_ports {lo}-{hi}: give at least two ports (a duplicate match takes two)")
    return config
