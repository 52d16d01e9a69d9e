"""One registry per plug-in kind: alignment scorers, decoding strategies, signals and claim checkers.

A plug-in is one module plus one ``add`` line in its package's ``__init__`` (or the module that defines the kind).
CLI choices, help texts and the server's request schemas are generated from these registries, so a new entry
shows up everywhere at once. Reading a registry first imports the package that fills it. The ``faithwatch``
command imports plug-in modules first (:func:`load_plugins`): those named in ``$FAITHWATCH_PLUGINS`` and the
``faithwatch.plugins`` entry points of installed packages.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from faithwatch.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One plug-in: its name, the object (a class or factory), a one-line help and kind-specific options."""

    name: str
    obj: T
    help: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)


class Registry(Generic[T]):
    """Named plug-ins of one kind, in registration order (which is also the order of CLI choices)."""

    def __init__(self, kind: str, home: str) -> None:
        self.kind, self.home = kind, home
        self._entries: dict[str, Entry[T]] = {}

    def add(self, name: str, obj: T, help: str = "", **options: Any) -> T:
        """Register ``obj`` as ``name``; a name is registered once (a second ``add`` is a programming error)."""
        if not name or name != name.strip() or any(c in name for c in "+:,"):
            raise ValueError(f"bad {self.kind} name {name!r}: no spaces, '+', ':' or ','")
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, obj, help, dict(options))
        return obj

    def remove(self, name: str) -> None:
        """Unregister ``name`` (for tests and plug-ins that replace a built-in)."""
        self._entries.pop(name, None)

    def _load(self) -> dict[str, Entry[T]]:
        importlib.import_module(self.home)
        return self._entries

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load()))

    def names(self, **where: Any) -> tuple[str, ...]:
        """The registered names, optionally only those whose options match ``where`` (e.g. ``default=True``)."""
        return tuple(n for n, e in self._load().items() if all(e.options.get(k) == v for k, v in where.items()))

    def get(self, name: str) -> Entry[T]:
        """The entry named ``name``; an unknown name is an :class:`InputError` that lists the choices."""
        entries = self._load()
        if name not in entries:
            raise InputError(f"unknown {self.kind} {name!r}; choose one of {', '.join(entries)}")
        return entries[name]

    def choices(self, sep: str = " | ", **where: Any) -> str:
        """The names joined for a help text, each with its argument hint (e.g. ``nli:<model>``)."""
        entries = self._load()
        return sep.join(n + (entries[n].options.get("arg_hint") or "") for n in self.names(**where))

    def help_lines(self) -> str:
        """``name: help`` for every entry, one per line."""
        return "\n".join(f"{e.name}: {e.help}" for e in self._load().values())


def factory(entry: Entry[Callable[..., T]]) -> Callable[..., T]:
    """The callable of an entry (typed helper)."""
    return entry.obj


#: alignment scorers (``faithwatch.alignment``): obj(arg: str | None, device: str) -> AlignmentScorer
scorers: Registry[Callable[..., Any]] = Registry("alignment scorer", "faithwatch.alignment")
#: decoding strategies (``faithwatch.decoding``): obj(run: StrategyRun) -> StrategyOutcome
strategies: Registry[Callable[..., Any]] = Registry("strategy", "faithwatch.decoding")
#: per-sentence signal families (``faithwatch.signals``): obj(ctx: SignalContext) -> Signal
signals: Registry[Callable[..., Any]] = Registry("signal", "faithwatch.signals")
#: claim checkers (``faithwatch.claims.checking``): obj(spec: CheckerSpec, backend) -> Checker
checkers: Registry[Callable[..., Any]] = Registry("claim checker", "faithwatch.claims.checking")


#: comma-separated plug-in modules (importable names) that the ``faithwatch`` command imports first
PLUGINS_ENV = "FAITHWATCH_PLUGINS"
#: the entry-point group of installed plug-in packages (``[project.entry-points."faithwatch.plugins"]``)
ENTRY_POINT_GROUP = "faithwatch.plugins"


def load_plugins() -> list[str]:
    """Import the plug-in modules of ``$FAITHWATCH_PLUGINS`` and of every ``faithwatch.plugins`` entry point (an
    entry point may also name a function, which is then called), so that their ``add`` lines run before the CLI
    builds its choices. Returns what was loaded; a plug-in that fails to load is an :class:`InputError` naming it."""
    from importlib.metadata import entry_points

    loaded: list[str] = []
    for name in (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",")):
        if not name:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any failure of the user's module, named
            raise InputError(f"the plug-in module {name!r} (${PLUGINS_ENV}) failed to load: "
                             f"{type(exc).__name__}: {exc}") from exc
        loaded.append(name)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = point.load()
            if callable(target):
                target()
        except Exception as exc:  # noqa: BLE001 - any failure of an installed plug-in, named
            raise InputError(f"the plug-in {point.name!r} ({point.value}, entry point {ENTRY_POINT_GROUP}) failed "
                             f"to load: {type(exc).__name__}: {exc}") from exc
        loaded.append(point.value)
    return loaded
