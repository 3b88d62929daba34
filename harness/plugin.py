"""The pytest plugin: chooses the implementation under test and shapes failure messages.

Options: ``--impl student|reference`` (default: ``$BPE_IMPL`` or ``student``),
``--submission DIR`` (another checkout laid out like this repository), ``--seed N`` for
randomized cases. Failures caused by unimplemented code, an ``adapters.py`` that does not
import, or a result of the wrong type are reported as one readable line each.
"""

from __future__ import annotations

import os

import pytest

from . import bounded
from . import impl as impl_mod
from .values import WrongResult

DEFAULT_SEED = 20261122


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
        "--seed",
        type=int,
        default=int(os.environ.get("BPE_SEED", DEFAULT_SEED)),
        help="seed of the randomized test cases (every failure prints it)",
    )
    group.addoption(
        "--isolate",
        action="store_true",
        default=False,
        help="run the implementations in sandboxed worker processes (what grading does)",
    )
    group.addoption(
        "--isolate-timeout", type=float, default=None, metavar="S", help="with --isolate: wall-clock limit per call"
    )


def pytest_configure(config: pytest.Config) -> None:
    bounded.install()
    config.addinivalue_line("markers", "speed: compares running time with the reference")
    if config.getoption("isolate", False):
        from sandbox.isolation import backend_for  # WorkerBackend with limits from grading.yaml / options

        config._bpe_backend_factory = lambda which: backend_for(config, which)
    try:
        from hypothesis import HealthCheck, Phase, settings

        settings.register_profile(
            "bpe",
            derandomize=True,  # the same examples every run: scores are reproducible
            database=None,  # and never depend on a previous run's saved failures
            deadline=None,
            print_blob=True,
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],  # no slow "explain"
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
        settings.load_profile("bpe")
    except ImportError:  # pragma: no cover - hypothesis is a test dependency
        pass


def make_backend(config: pytest.Config, which: str):
    """The backend running ``which`` ("submission" or "reference") for this session."""
    factory = getattr(config, "_bpe_backend_factory", None)
    if factory is not None:
        return factory(which)
    if which == "reference":
        return impl_mod.LocalBackend("reference")
    return impl_mod.LocalBackend(config.getoption("impl"), config.getoption("submission"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    where = config.getoption("submission") or "this checkout"
    if config.getoption("submission"):
        from .submission import detect_layout

        layout = detect_layout(config.getoption("submission"))
        where += f", {layout.describe()}" if layout else ", no adapters.py"
    return [f"bpe-harness: implementation={config.getoption('impl')} ({where}), seed={config.getoption('seed')}"]


def _not_implemented_line(excinfo: pytest.ExceptionInfo) -> str:
    message = str(excinfo.value).strip()
    if message:
        return f"not implemented: {message}"
    code = excinfo.traceback[-1].frame.code.raw
    return f"not implemented: {getattr(code, 'co_qualname', code.co_name)}"


def _known_bug_diagnosis():
    """``mutants.diagnose.diagnose`` where the course staff's mutants/ is present, else None."""
    global _DIAGNOSE
    if _DIAGNOSE is False:
        try:  # not in the student handout: the feature is then silently off
            from mutants.diagnose import diagnose, enabled

            _DIAGNOSE = diagnose if enabled() else None
        except Exception:
            _DIAGNOSE = None
    return _DIAGNOSE


_DIAGNOSE = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    # Record the submission's calls during the test, for "this matches a known bug".
    impl_mod.RECORDING = [] if _known_bug_diagnosis() is not None else None
    yield


def _add_known_bug(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    records, impl_mod.RECORDING = impl_mod.RECORDING, None
    if call.when != "call" or not records or call.excinfo.errisinstance(NotImplementedError):
        return
    line = _known_bug_diagnosis()(item.nodeid, {m.name for m in item.iter_markers()}, records)
    if line is None:
        return
    if isinstance(report.longrepr, str):
        report.longrepr = f"{report.longrepr}\n{line}"
    elif hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection("known bug", line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.excinfo is None:
        if call.when == "call":
            impl_mod.RECORDING = None
        return
    excinfo = call.excinfo
    if excinfo.errisinstance(NotImplementedError):
        report.longrepr = _not_implemented_line(excinfo)
    elif excinfo.errisinstance((impl_mod.BrokenImplementation, WrongResult)):
        report.longrepr = str(excinfo.value)
    _add_known_bug(item, call, report)
    if "seed" in getattr(item, "fixturenames", ()):
        seed = item.config.getoption("seed")
        report.sections.append(("reproduce", f"randomized with seed {seed}: pytest '{item.nodeid}' --seed {seed}"))
