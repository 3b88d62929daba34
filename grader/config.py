"""``grading.yaml``: the grading policy, loaded and validated before anything runs.

Every problem ends in one :class:`ConfigError` naming the file, the line and the fix. A key
the file does not set has its default, declared once with its description: here (:class:`Config`'s
fields), or in the layer that uses it (speed: :class:`harness.timing.SpeedPolicy`, the seed:
:data:`harness.DEFAULT_SEED`, isolation: :class:`sandbox.limits.IsolationLimits`, forbidden
modules: :data:`sandbox.forbidden.FORBIDDEN_MODULES`, time: :class:`grader.budget.TimePolicy`).
``docs/policy.md``'s table of keys is generated from them (:mod:`grader.policy_keys`).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib.util
import pickle
import pkgutil
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness import DEFAULT_SEED
from harness.timing import SpeedPolicy
from sandbox.forbidden import FORBIDDEN_MODULES, TOKENIZER_LIBRARIES
from sandbox.limits import IsolationLimits, configurable
from .budget import TimePolicy, time_policy

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
HIDDEN_OUTPUT = ("full", "first_line", "none")
SEED_POLICIES = ("fixed", "per_submission")
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_PATHS = ("tests/public", "tests/hidden")  # what a policy grades unless its `paths:` says otherwise


class ConfigError(Exception):
    """An invalid grading.yaml: the message is the one line shown to the instructor."""


def key(default: Any, what: str, name: str | None = None) -> Any:
    """A policy key's field: its default and its description (``name``: its place in the file
    when not the field's name; ``""``: the fields of its default are top-level keys)."""
    return field(default=default, metadata={"policy": what, **({"key": name} if name is not None else {})})


@dataclass(frozen=True)
class Override:
    select: tuple[str, ...]
    weight: float = 1.0  # share of the group's points (each test: 1)
    visibility: str | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class Group:
    name: str
    title: str
    points: float
    select: tuple[str, ...]
    markers: tuple[str, ...]
    visibility: str | None
    timeout: float | None
    overrides: tuple[Override, ...]
    line: int

    def matches(self, nodeid: str, markers: set[str]) -> bool:
        return any(fnmatch.fnmatchcase(nodeid, p) for p in self.select) or bool(markers & set(self.markers))


@dataclass(frozen=True)
class Config:
    """A grading policy: its file, its groups, and every other key (the default unless the file sets it)."""

    path: Path
    groups: tuple[Group, ...]
    total: float | None = key(None, "the points of all groups, checked against their sum (not set: not checked)")
    timeout: float = key(60.0, "default time limit of one test, seconds (a group or an override may set its own)")
    time: TimePolicy = key(TimePolicy(), "", name="")  # budget, timeouts_in_a_row (grader/budget.py)
    visibility: str = key("visible", "Gradescope visibility of tests under `tests/public/`: " + ", ".join(VISIBILITIES))
    hidden_visibility: str = key("after_published", "the same, of tests under `tests/hidden/`")
    hidden_output: str = key("first_line", "what a failed test that is not visible shows: " + ", ".join(HIDDEN_OUTPUT))
    seed_policy: str = key("fixed", "`fixed`: every submission gets the same randomized cases; `per_submission`: the "
                           "`value` mixed with the submission's name (its own cases, reproducibly)", name="seed.policy")
    seed_value: int = key(DEFAULT_SEED, "the seed of the randomized cases (Hypothesis tests' too) and the "
                          "hash seed (`PYTHONHASHSEED`) the submission runs under, so its sets' order and its "
                          "score are the same every run; the default is also `pytest --seed`'s (`harness.DEFAULT_SEED`)", name="seed.value")
    speed: SpeedPolicy = key(SpeedPolicy(), "speed tests", name="speed")
    forbidden_modules: tuple[str, ...] = key(FORBIDDEN_MODULES, "top-level modules the sandboxed worker cannot import (`[]`: none)")
    isolation: IsolationLimits = key(IsolationLimits(), "limits of the worker that runs submitted code", name="isolation")
    paths: tuple[str, ...] = key(DEFAULT_PATHS, "test folders or files run, relative to the repository")
    install_declared: bool = key(False, "install what the submission declares (`pyproject.toml`, `requirements.txt`, at its `uv.lock`'s versions) and grading lacks, for its grading only: wheels, never torch ([isolation](isolation.md); `grade --[no-]install-declared` overrides it); `false`: stand-ins")

    def seed_for(self, submission: str) -> int:
        """The seed of the randomized cases: fixed, or derived from the submission's name."""
        if self.seed_policy == "fixed":
            return self.seed_value
        return (self.seed_value ^ zlib.crc32(submission.encode("utf-8"))) & 0x7FFFFFFF

    def group_of(self, nodeid: str, markers: set[str]) -> Group | None:
        """The first group (in file order) whose selection matches the test."""
        return next((g for g in self.groups if g.matches(nodeid, markers)), None)

    def test_policy(self, group: Group, nodeid: str) -> tuple[float, str, float]:
        """(weight, visibility, timeout) of one test, after the group's overrides."""
        hidden = "/hidden/" in nodeid.split("::", 1)[0].replace("\\", "/")
        visibility = group.visibility or (self.hidden_visibility if hidden else self.visibility)
        weight, timeout = 1.0, group.timeout or self.timeout
        for o in group.overrides:
            if any(fnmatch.fnmatchcase(nodeid, p) for p in o.select):
                weight = o.weight
                visibility = o.visibility or visibility
                timeout = o.timeout or timeout
        return weight, visibility, timeout


# ---- loading with line numbers ----------------------------------------------------------


class _Doc:
    """A YAML node with its line, for messages."""

    def __init__(self, path: Path, node: yaml.Node, where: str) -> None:
        self.path, self.node, self.where = path, node, where

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1

    def fail(self, problem: str, fix: str) -> ConfigError:
        where = f"{self.where}: " if self.where else ""  # top-level keys have no path
        return ConfigError(f"{self.path}:{self.line}: {where}{problem}; {fix}")

    def mapping(self, allowed: dict[str, str]) -> dict[str, "_Doc"]:
        if not isinstance(self.node, yaml.MappingNode):
            raise self.fail(f"expected a mapping, got {self._kind()}", "write `key: value` lines")
        out: dict[str, _Doc] = {}
        for key_node, value_node in self.node.value:
            key = key_node.value
            if key not in allowed:
                close = difflib.get_close_matches(str(key), list(allowed), n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(sorted(allowed))}"
                raise _Doc(self.path, key_node, self.where).fail(f"unknown key {key!r}", hint)
            if key in out:
                raise _Doc(self.path, key_node, self.where).fail(f"key {key!r} appears twice", "keep one")
            out[key] = _Doc(self.path, value_node, f"{self.where}.{key}" if self.where else key)
        return out

    def _kind(self) -> str:
        if isinstance(self.node, yaml.MappingNode):
            return "a mapping"
        if isinstance(self.node, yaml.SequenceNode):
            return "a list"
        return repr(self.node.value)

    def scalar(self) -> Any:
        if not isinstance(self.node, yaml.ScalarNode):
            raise self.fail(f"expected a single value, got {self._kind()}", "write a value, not a list or mapping")
        return yaml.constructor.SafeConstructor().construct_object(self.node, deep=True)

    def number(self, minimum: float = 0.0, integer: bool = False) -> float:
        value = self.scalar()
        kind = "a whole number" if integer else "a number"
        if type(value) not in ((int,) if integer else (int, float)):
            raise self.fail(f"expected {kind}, got {value!r}", f"write {kind} such as 10")
        if value < minimum:
            raise self.fail(f"{value!r} is below {minimum:g}", f"use {kind} of at least {minimum:g}")
        return value

    def boolean(self) -> bool:
        if type(value := self.scalar()) is not bool:
            raise self.fail(f"expected true or false, got {value!r}", "write true or false")
        return value

    def string(self, choices: tuple[str, ...] | None = None) -> str:
        value = self.scalar()
        if type(value) is not str or not value:
            raise self.fail(f"expected text, got {value!r}", "write a word")
        if choices and value not in choices:
            raise self.fail(f"{value!r} is not allowed", f"use one of {', '.join(choices)}")
        return value

    def strings(self) -> tuple[str, ...]:
        if isinstance(self.node, yaml.ScalarNode):
            return (self.string(),)
        if not isinstance(self.node, yaml.SequenceNode):
            raise self.fail(f"expected a list of patterns, got {self._kind()}", "write `[pattern, ...]`")
        return tuple(_Doc(self.path, n, f"{self.where}[{i}]").string() for i, n in enumerate(self.node.value))

    def items(self) -> list["_Doc"]:
        if not isinstance(self.node, yaml.SequenceNode):
            raise self.fail(f"expected a list, got {self._kind()}", "write one `- ...` item per entry")
        return [_Doc(self.path, n, f"{self.where}[{i}]") for i, n in enumerate(self.node.value)]


def write_policy(config: Config, path: Path) -> Path:
    """Hand a loaded policy down to the grade command's pytest run: ``path`` (in grade's
    private run folder, written before any submission code runs) holds it pickled, so the
    run reads back exactly what was validated (:func:`read_policy`) instead of a second copy
    of ``grading.yaml``."""
    path.write_bytes(pickle.dumps(config))
    return path


def read_policy(path: str | Path) -> Config:
    """The policy :func:`write_policy` wrote; ``ConfigError`` if ``path`` holds none."""
    try:
        config = pickle.loads(Path(path).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as err:
        raise ConfigError(f"{path}: cannot read the grading policy passed down ({err})") from None
    if not isinstance(config, Config):
        raise ConfigError(f"{path}: holds {type(config).__name__}, not a grading policy")
    return config


def _read_yaml(path: Path) -> yaml.Node:
    """The YAML document of ``path``; ``ConfigError`` if unreadable, invalid or empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the grading policy ({err.strerror}); check the path") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{path}{line}: not valid YAML ({problem}); fix the syntax") from None
    if node is None:
        raise ConfigError(f"{path}:1: the file is empty; it needs at least `groups:`")
    return node


def _seed(top: dict[str, _Doc]) -> dict[str, Any]:
    """The ``seed:`` keys set (``seed_policy``, ``seed_value``); :class:`Config` has the defaults."""
    seed = top["seed"].mapping({"policy": "", "value": ""}) if "seed" in top else {}
    read = {"policy": lambda d: d.string(SEED_POLICIES), "value": lambda d: int(d.number(integer=True))}
    return {f"seed_{k}": read[k](seed[k]) for k in seed}


def _speed(top: dict[str, _Doc]) -> dict[str, SpeedPolicy]:
    """``speed:``'s keys over :class:`SpeedPolicy`'s defaults (``{}`` without the section)."""
    if "speed" not in top:
        return {}
    s = top["speed"].mapping({"multiple": "", "floor": ""})
    return {"speed": SpeedPolicy(**{k: s[k].number(1.0 if k == "multiple" else 0.0) for k in s})}


def _isolation(top: dict[str, _Doc]) -> dict[str, IsolationLimits]:
    """``isolation:``, the limits :func:`sandbox.limits.configurable` names, over their defaults."""
    if "isolation" not in top:
        return {}
    iso = top["isolation"].mapping(dict.fromkeys(configurable(), ""))
    return {"isolation": IsolationLimits(
        **{k: (float(iso[k].number(0.1)) if k == "call_timeout" else int(iso[k].number(1, integer=True))) for k in iso}
    )}


def installed(name: str) -> bool:
    """Whether a top-level module ``name`` can be imported here (found, not imported)."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _close_module(name: str) -> str | None:
    """The known tokenizer library, else the installed top-level module, closest to ``name``."""
    for candidates in (TOKENIZER_LIBRARIES, sorted({m.name for m in pkgutil.iter_modules()} | set(sys.stdlib_module_names))):
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        if close:
            return close[0]
    return None


def _forbidden(path: Path, top: dict[str, _Doc]) -> dict[str, tuple[str, ...]]:
    """``forbidden_modules:``: top-level module names, each a known tokenizer library
    (:data:`sandbox.forbidden.TOKENIZER_LIBRARIES`) or a module installed where grading runs,
    so that a typo (``tiktokn``) is an error instead of silently lifting the ban."""
    if "forbidden_modules" not in top:
        return {}
    doc = top["forbidden_modules"]
    if isinstance(doc.node, yaml.SequenceNode) and not doc.node.value:
        return {"forbidden_modules": ()}  # `[]`: no module is forbidden
    forbidden = doc.strings()
    for i, name in enumerate(forbidden):
        item = _Doc(path, doc.node.value[i] if isinstance(doc.node, yaml.SequenceNode) else doc.node, f"forbidden_modules[{i}]")
        if not MODULE_NAME.match(name):
            raise item.fail(f"{name!r} is not a top-level module name", "write names such as tiktoken (no dots, no paths)")
        if name not in TOKENIZER_LIBRARIES and not installed(name):
            close = _close_module(name)
            raise item.fail(
                f"{name!r} is neither a known tokenizer library nor a module installed where grading runs",
                f"did you mean {close}?" if close else f"check the spelling (known: {', '.join(FORBIDDEN_MODULES)})",
            )
    return {"forbidden_modules": tuple(dict.fromkeys(forbidden))}


def _paths(path: Path, top: dict[str, _Doc]) -> dict[str, tuple[str, ...]]:
    """``paths:``: test folders or files of the harness's repository (``tests/cs336``), each existing."""
    from harness import ROOT as root

    if "paths" not in top:
        return {}
    doc, paths = top["paths"], top["paths"].strings()
    for p in paths:
        if p.startswith("/") or ".." in Path(p).parts or not (root / p).exists():
            raise doc.fail(f"{p!r} is not a test folder or file of this repository", f"write paths such as {', '.join(DEFAULT_PATHS)}")
    return {"paths": tuple(dict.fromkeys(paths))}


def _override(o: _Doc) -> Override:
    od = o.mapping({"select": "", "weight": "", "visibility": "", "timeout": ""})
    if "select" not in od:
        raise o.fail("missing `select`", "say which tests the override applies to")
    read = {"weight": lambda d: d.number(0.0), "visibility": lambda d: d.string(VISIBILITIES), "timeout": lambda d: d.number(0.1)}
    return Override(select=od["select"].strings(), **{k: read(od[k]) for k, read in read.items() if k in od})


def _group(item: _Doc, names: set[str]) -> Group:
    """One entry of ``groups:``; its name must not be in ``names`` (it is added)."""
    g = item.mapping({k: "" for k in ("name", "title", "points", "select", "markers", "visibility", "timeout", "overrides")})
    for required in ("name", "points"):
        if required not in g:
            raise item.fail(f"missing `{required}`", f"add `{required}:` to this group")
    if "select" not in g and "markers" not in g:
        raise item.fail("no `select:` or `markers:`", "say which tests belong to the group")
    name = g["name"].string()
    if name in names:
        raise g["name"].fail(f"group name {name!r} is used twice", "give each group its own name")
    names.add(name)
    overrides = tuple(_override(o) for o in (g["overrides"].items() if "overrides" in g else []))
    return Group(
        name=name,
        title=g["title"].string() if "title" in g else name,
        points=g["points"].number(0.0),
        select=g["select"].strings() if "select" in g else (),
        markers=g["markers"].strings() if "markers" in g else (),
        visibility=g["visibility"].string(VISIBILITIES) if "visibility" in g else None,
        timeout=g["timeout"].number(0.1) if "timeout" in g else None,
        overrides=overrides,
        line=item.line,
    )


def _groups(top: dict[str, _Doc]) -> tuple[tuple[Group, ...], float | None]:
    """The groups and ``total:`` (checked against the groups' points)."""
    names: set[str] = set()
    groups = tuple(_group(item, names) for item in top["groups"].items())
    if not groups:
        raise top["groups"].fail("the list of groups is empty", "add at least one group")
    total = top["total"].number(0.0) if "total" in top else None
    points = sum(g.points for g in groups)
    if total is not None and abs(points - total) > 1e-9:
        detail = " + ".join(f"{g.points:g}" for g in groups)
        raise top["total"].fail(f"the groups' points add up to {points:g} ({detail}), not {total:g}", "change a group's points or `total`")
    return groups, total


def load_config(path: str | Path) -> Config:
    """Read and validate ``grading.yaml``; ``ConfigError`` (one line) on any problem."""
    path = Path(path)
    top = _Doc(path, _read_yaml(path), "").mapping(
        {k: "" for k in ("version", "total", "timeout", "budget", "timeouts_in_a_row", "visibility", "hidden_visibility", "hidden_output", "seed", "speed", "isolation", "forbidden_modules", "paths", "install_declared", "groups")}
    )
    if "groups" not in top:
        raise ConfigError(f"{path}:1: no `groups:`; list the test groups and their points")
    if "version" in top and top["version"].scalar() != 1:
        raise top["version"].fail(f"version {top['version'].scalar()!r} is not supported", "write `version: 1`")
    read = {"timeout": lambda d: d.number(0.1), "visibility": lambda d: d.string(VISIBILITIES),
            "hidden_visibility": lambda d: d.string(VISIBILITIES), "hidden_output": lambda d: d.string(HIDDEN_OUTPUT), "install_declared": lambda d: d.boolean()}
    keys = {k: read(top[k]) for k, read in read.items() if k in top}  # the keys set; the rest: Config's defaults
    keys |= _seed(top) | _speed(top) | _isolation(top) | _forbidden(path, top)
    groups, total = _groups(top)
    return Config(path=path, groups=groups, total=total, time=time_policy(top), **keys, **_paths(path, top))


def check_selection(config: Config, collected: dict[str, set[str]], partial: bool = False) -> dict[str, Group]:
    """Assign every collected test (node id -> markers) to its group; ``ConfigError`` for a
    group or override whose selection matches no test (unless ``partial``: only a chosen
    subset of the suite was collected), or a test in no group."""
    assigned = {nodeid: config.group_of(nodeid, markers) for nodeid, markers in collected.items()}
    for group in config.groups if not partial else ():
        if not any(g is group for g in assigned.values()):
            raise ConfigError(
                f"{config.path}:{group.line}: group {group.name!r}: its selection {list(group.select) + list(group.markers)} "
                f"matches no test; fix the patterns (node ids like tests/public/test_x.py::*)"
            )
        for o in group.overrides:
            if not any(fnmatch.fnmatchcase(n, p) for n, g in assigned.items() if g is group for p in o.select):
                raise ConfigError(f"{config.path}:{group.line}: group {group.name!r}: override {list(o.select)} matches none of its tests; fix the pattern")
    for nodeid, group in assigned.items():
        if group is None:
            raise ConfigError(f"{config.path}: test {nodeid} belongs to no group; add a `select:` pattern that matches it")
    return assigned
