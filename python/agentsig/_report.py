"""The verification report: the CLI's ``--json`` report (``agentsig.report/1``,
``docs/report.schema.json``), field for field."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional

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
    ``error``), ``verified``, ``signatures``, ``checks``, ``error`` and
    ``details``. Success is the absence of an exception: a report has no
    truth value.
    """

    __slots__ = ("_d", "schema", "command", "subject", "verdict", "verified",
                 "signatures", "checks", "error", "details")

    schema: str
    command: str
    subject: Optional[str]
    verdict: str
    verified: bool
    signatures: "tuple[Mapping[str, Any], ...]"
    checks: "tuple[Mapping[str, Any], ...]"
    error: Optional[Mapping[str, Any]]
    details: Mapping[str, Any]

    def __init__(self, d: Dict[str, Any]) -> None:
        set_ = object.__setattr__
        set_(self, "_d", d)
        set_(self, "schema", d["schema"])
        set_(self, "command", d["command"])
        set_(self, "subject", d.get("subject"))
        set_(self, "verdict", d["verdict"])
        set_(self, "verified", bool(d["verified"]))
        set_(self, "signatures", _freeze(d.get("signatures", [])))
        set_(self, "checks", _freeze(d.get("checks", [])))
        set_(self, "error", _freeze(d.get("error")))
        set_(self, "details", _freeze(d.get("details", {})))

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Report":
        return cls(d)

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
        return json.dumps(self.to_dict(), **kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<agentsig.Report {self.command!r} {self.verdict}>"
