"""The verification report: the CLI's ``--json`` report (``agentsig.report/1``,
``docs/report.schema.json``), field for field."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any, Dict, Mapping, Optional

__all__ = ["Report"]


def _freeze(v: Any) -> Any:
    if isinstance(v, dict):
        return MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


class Report:
    """What was checked and how it ended (frozen).

    Attributes are the members of the CLI's JSON report: ``schema``,
    ``command``, ``subject``, ``verdict`` (``verified``, ``not-verified``,
    ``unsigned``: accepted by ``allow_unsigned``, never verified;
    ``unavailable``; ``error``), ``verified``, ``signatures``, ``checks``, ``error`` and
    ``details`` (read-only views: tuples and mappings). Success is the
    absence of an exception: a report has no truth value.
    """

    __slots__ = ("_text", "_cache")

    def __init__(self, d: Dict[str, Any]) -> None:
        object.__setattr__(self, "_text", None)
        object.__setattr__(self, "_cache", d)

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Report":
        return cls(d)

    @classmethod
    def _from_json(cls, text: str) -> "Report":
        """The report from the JSON text the Rust library serialized (parsed
        on first access)."""
        r = cls.__new__(cls)
        object.__setattr__(r, "_text", text)
        object.__setattr__(r, "_cache", None)
        return r

    @property
    def _d(self) -> Dict[str, Any]:
        d = self._cache
        if d is None:
            d = json.loads(self._text)
            object.__setattr__(self, "_cache", d)
        return d

    @property
    def schema(self) -> str:
        """``agentsig.report/1``."""
        return self._d["schema"]

    @property
    def command(self) -> str:
        """The operation, as the CLI names it (``verify``, ``http verify``, ``delegation audit``...)."""
        return self._d["command"]

    @property
    def subject(self) -> Optional[str]:
        """What was checked, when named (the URL of a request)."""
        return self._d.get("subject")

    @property
    def verdict(self) -> str:
        """``verified``, ``not-verified`` or ``error``."""
        return self._d["verdict"]

    @property
    def verified(self) -> bool:
        """``verdict == "verified"``."""
        return bool(self._d["verified"])

    @property
    def signatures(self) -> "tuple[Mapping[str, Any], ...]":
        """One entry per signature examined."""
        return _freeze(self._d.get("signatures", []))

    @property
    def checks(self) -> "tuple[Mapping[str, Any], ...]":
        """Checks beyond signatures (``content-digest``, delegation rules...)."""
        return _freeze(self._d.get("checks", []))

    @property
    def error(self) -> Optional[Mapping[str, Any]]:
        """``{code, message}``: the first reason it did not verify, else ``None``."""
        return _freeze(self._d.get("error"))

    @property
    def details(self) -> Mapping[str, Any]:
        """Operation-specific details (``canonical_sha256``, ``signed_card``, ``web_bot_auth``...)."""
        return _freeze(self._d.get("details", {}))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("agentsig.Report is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("agentsig.Report is frozen")

    def __bool__(self) -> bool:
        raise TypeError(
            "an agentsig.Report has no truth value: success is the absence of an "
            "exception (NotVerified carries the report of a failure)"
        )

    def to_dict(self) -> Dict[str, Any]:
        """The report as the CLI's JSON object (a fresh, mutable copy)."""
        return _thaw(_freeze(self._d))

    def to_json(self, **kwargs: Any) -> str:
        """The report as JSON text (``json.dumps`` keyword arguments pass through)."""
        if self._text is not None and not kwargs:
            return self._text
        return json.dumps(self._d, **kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self._d == other._d

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<agentsig.Report {self.command!r} {self.verdict}>"
