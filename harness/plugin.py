"""The pytest plugin: chooses the implementation under test and shapes failure messages.

Options: ``--impl student|reference`` (default: ``$BPE_IMPL`` or ``student``),
``--submission DIR`` (another checkout laid out like this repository), ``--submission-packages
DIR`` (packages installed for it alone, ``grade --install-declared``), ``--seed N`` for
randomized cases. Failures caused by unimplemented code, an ``adapters.py`` that does not
import, or a result of the wrong type are reported as one readable line each.

The layers above plug in through hooks and the session's stash (:mod:`harness.keys`), never
imported from here: ``pytest_bpe_make_backend`` (:mod:`harness.hooks`) gives the backend
(``sandbox.plugin``'s isolated worker under ``--isolate``); when a plugin sets
``RECORD_CALLS``, each test's calls into the submission are kept in ``item.stash[RECORDS]``
(the grading plugin hands them to the known-bug diagnosis) until the test's teardown.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from . import DEFAULT_SEED, bounded, hooks, keys, timeouts
from . import impl as impl_mod
from .breaker import NotCalled
from .parse_once import parse_once
from .recording import CallLog
from .values import WrongResult



def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpe", "BPE assignment harness")
    group.addoption(
        "--impl",
        choices=["student", "reference"],
        default=os.environ.get(impl_mod.IMPL_ENV, "student"),
        help="implementation under test: the student/ package (default) or reference/",
    )
    group.addoption("--submission", default=None, metavar="DIR", help="test another checkout laid out like this one")
    group.addoption(
        "--submission-packages", default=None, metavar="DIR",
        help="packages installed for the submission alone (grade --install-declared): on its sys.path after the "
             "environment's own entries, a plain entry, never a site directory (no .pth file in it is processed)",
    )
    group.addoption(
        "--seed",
        type=int,
        default=int(os.environ.get("BPE_SEED", DEFAULT_SEED)),
        help="seed of the randomized test cases (every failure prints it)",
    )


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_configure(config: pytest.Config) -> None:
    bounded.install()
    config.addinivalue_line("markers", "speed: compares running time with the reference")
    config.stash[keys.CALL_LOG] = CallLog()
    if hasattr(config.hook, "pytest_timeout_set_timer"):  # pytest-timeout is loaded
        config.pluginmanager.register(timeouts.SignalTimer(), "bpe-timeout-signal")
    try:
        from hypothesis import HealthCheck, Phase, settings

        settings.register_profile(
            "bpe",
            derandomize=False,  # each test is seeded with --seed (pytest_collection_modifyitems)
            database=None,  # and never depends on a previous run's saved failures
            deadline=None,
            print_blob=False,  # reproduce with --seed, never by editing the test (@reproduce_failure)
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],  # no slow "explain"
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
        settings.load_profile("bpe")
        _no_local_constants()
    except ImportError:  # pragma: no cover - hypothesis is a test dependency
        pass


def _no_local_constants() -> None:
    """Hypothesis (6.131 and later) also draws constants it finds in the *local* modules
    imported so far (a submission's string literals among them). Which those are depends on
    whether the submission runs in this process or in the isolated worker, and on the tests
    that ran before, so the same seed gave different examples in ``pytest`` and ``pytest
    --isolate``: keep to Hypothesis's global constants, the same everywhere. No public
    setting turns it off, so this is the one private name of a dependency the project touches;
    ``selftests/test_hypothesis_examples.py`` checks the examples from outside and fails when a
    Hypothesis release moves the name (CI installs the newest)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - an older or newer Hypothesis
        return
    local, constants = getattr(providers, "_get_local_constants", None), getattr(providers, "Constants", None)
    if local is None or constants is None or getattr(local, "bpe_disabled", False):
        return
    empty = constants()

    def no_constants():
        return empty

    no_constants.bpe_disabled = True
    providers._get_local_constants = no_constants


@pytest.hookimpl(tryfirst=True)
def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> list[str] | None:
    """A failing comparison of large values explained in bounded time and size
    (:func:`harness.bounded.explain`); None leaves every other one to pytest."""
    try:
        return bounded.explain(op, left, right)
    except Exception:
        return None


def make_backend(config: pytest.Config, which: str) -> impl_mod.Backend:
    """The backend running ``which`` ("submission" or "reference") for this session: a
    plugin's (``pytest_bpe_make_backend``), else in this process. The submission's load
    facts go to ``config.stash[LOADED]``."""
    backend = config.hook.pytest_bpe_make_backend(config=config, which=which)
    if backend is None and which == "reference":
        backend = impl_mod.LocalBackend("reference")
    elif backend is None:
        backend = impl_mod.LocalBackend(config.getoption("impl"), config.getoption("submission"),
                                        packages=config.getoption("submission_packages"))
    if which == "submission":
        config.stash[keys.LOADED] = backend.facts
    return backend


def implementation(config: pytest.Config, which: str) -> impl_mod.Implementation:
    """The :class:`~harness.impl.Implementation` of ``which``; the submission's records its
    calls into the session's call log, and goes through the session's circuit breaker when
    there is one (:data:`harness.keys.BREAKER`)."""
    if which != "submission":
        return impl_mod.Implementation(make_backend(config, which))
    return impl_mod.Implementation(make_backend(config, which), recorder=config.stash.get(keys.CALL_LOG, None),
                                   breaker=config.stash.get(keys.BREAKER, None))


def pytest_report_header(config: pytest.Config) -> list[str]:
    where = config.getoption("submission") or "this checkout"
    if config.getoption("submission"):
        from .submission import detect_layout

        layout = detect_layout(config.getoption("submission"))
        where += f", {layout.describe()}" if layout else ", no adapters.py"
    return [f"bpe-harness: implementation={config.getoption('impl')} ({where}), seed={config.getoption('seed')}"]


def not_implemented(excinfo: pytest.ExceptionInfo) -> str:
    """What a ``NotImplementedError`` says is not implemented: its message (the stubs name
    their function), else the function that raised it."""
    message = str(excinfo.value).strip()
    if message:
        return message
    code = excinfo.traceback[-1].frame.code.raw
    return getattr(code, "co_qualname", code.co_name)


def _not_implemented_line(excinfo: pytest.ExceptionInfo) -> str:
    return f"not implemented: {not_implemented(excinfo)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    # Record the submission's calls during the test when a plugin asked (known-bug diagnosis).
    log = item.config.stash.get(keys.CALL_LOG, None)
    if log is None or not item.config.stash.get(keys.RECORD_CALLS, False):
        yield
        return
    records = item.stash[keys.RECORDS] = []
    log.start(records)
    yield
    log.stop()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    # the call's report (and the diagnosis reading the records) is made: the records go,
    # instead of living as long as the session's items (what they hold came from the submission)
    if keys.RECORDS in item.stash:
        del item.stash[keys.RECORDS]


def _one_line(excinfo: pytest.ExceptionInfo, config: pytest.Config | None = None) -> str | None:
    """The whole failure message of an exception reported as one line, else None (a test
    over its time limit: the line, and in-process the submission's frames, from ``config``)."""
    if excinfo.errisinstance(NotImplementedError):
        return _not_implemented_line(excinfo)
    if excinfo.errisinstance((impl_mod.BrokenImplementation, WrongResult, NotCalled)):
        return str(excinfo.value)
    if config is not None and timeouts.timeout_limit(excinfo) is not None:
        root = config.getoption("submission") or impl_mod.ROOT
        return timeouts.timeout_message(excinfo, Path(root))
    return None


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_one_line_report(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
    """The report of a failure told in one line, made without pytest's traceback rendering
    (which parses each traceback file's source: ~30 ms a failure, most of the time of
    grading the untouched stubs); None lets pytest make every other report."""
    excinfo = call.excinfo
    line = _one_line(excinfo, item.config) if isinstance(excinfo, pytest.ExceptionInfo) else None
    if line is None:
        return None
    told = copy.copy(call)
    told.excinfo = line  # not an ExceptionInfo: pytest takes it as the failure's text
    report = pytest.TestReport.from_item_and_call(item, told)
    if timeouts.timeout_limit(excinfo) is not None:  # the dump of other threads names harness frames
        kept = [(title, timeouts.without_stack_dump(text)) for title, text in report.sections]
        report.sections = [(title, text) for title, text in kept if text.strip()]
    return report


def _short(format_failure):
    """``format_failure`` (an item's ``repr_failure``) giving the one-line message at once
    when there is one: Hypothesis renders a failing example's traceback through it for
    every example it runs (the stubs fail each one), not only for the report."""

    def repr_failure(excinfo: pytest.ExceptionInfo, *args, **kwargs):
        line = _one_line(excinfo)
        if line is not None:
            return line
        with parse_once():  # each test module parsed once for all its failures
            return format_failure(excinfo, *args, **kwargs)

    return repr_failure


def part_of(item: pytest.Item) -> int:
    """The part a test belongs to: the ``Part N`` its module's docstring starts with (the
    speed tests and modules without one come after every part)."""
    import re

    module = getattr(item, "module", None)
    found = re.match(r"\s*Part\s+(\d+)", getattr(module, "__doc__", None) or "")
    return int(found.group(1)) if found else 1000


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # part by part (Part 1's files first), so that `pytest -x` stops at the first part that
    # fails; files of one part keep their order (a stable sort)
    items.sort(key=part_of)
    seed = config.getoption("seed")
    for item in items:
        if isinstance(item, pytest.Function):
            item.repr_failure = _short(item.repr_failure)
            if is_hypothesis_test(item):  # the same examples for the same --seed, in any process and order
                from hypothesis import seed as hypothesis_seed

                hypothesis_seed(seed)(item.obj)


def is_hypothesis_test(item: pytest.Item) -> bool:
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.excinfo is None:
        return
    if "seed" in getattr(item, "fixturenames", ()) or is_hypothesis_test(item):
        seed = item.config.getoption("seed")
        report.sections.append(("reproduce", f"randomized with seed {seed}: pytest '{item.nodeid}' --seed {seed}"))
