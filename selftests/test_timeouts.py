"""A test over its time limit is told in one line naming the submission's call in progress.

pytest-timeout's failure is raised wherever the test is when the limit passes; here the
submission raises that same failure itself, so the rule is checked in-process, at once, on
the traceback a real timeout leaves (the isolated grading: test_robustness.py's "timed_out").
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import registry, timeouts, values
from harness.impl import Implementation, LocalBackend

PYTEST_TIMEOUT = "Timeout (>2.5s) from pytest-timeout."  # pytest_timeout.PYTEST_FAILURE_MESSAGE % 2.5
ADAPTERS = f'''
from slowcode.slow import deep


def run_merge(ids, pair, new_id):
    return deep()


def run_pretokenize(text):
    return [text]


class Tok:
    def encode(self, text):
        return deep()

    def encode_iterable(self, chunks):
        yield 1
        yield deep()


def get_tokenizer(vocab, merges, special_tokens=None):
    return Tok()
'''
SLOW = f'''
import pytest


def deep():
    return deeper()


def deeper():
    raise pytest.fail.Exception({PYTEST_TIMEOUT!r})  # as pytest-timeout's signal handler does, here
'''
HARNESS_FRAME = ("harness/", "sandbox/", "grader/", "site-packages", "pytest")


@pytest.fixture
def submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A submission whose package (not named ``student``: the session's own) goes from
    ``sys.modules`` and ``sys.path`` again after the test."""
    sub = tmp_path / "sub"
    (sub / "slowcode").mkdir(parents=True)
    (sub / "slowcode" / "__init__.py").write_text("")
    (sub / "slowcode" / "slow.py").write_text(SLOW)
    (sub / "adapters.py").write_text(ADAPTERS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield sub
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(sub)):
            del sys.modules[name]


CALLS = {
    "adapter": (lambda impl: impl.run_merge([1, 2], (1, 2), 3), "adapters.run_merge(...)"),
    "method": (lambda impl: impl.get_tokenizer({}, [], None).encode("x"),
               "encode(...) of the tokenizer from adapters.get_tokenizer(...)"),
}


@pytest.mark.parametrize("kind", list(CALLS))
def test_a_timeout_names_the_call_in_progress_and_only_the_submissions_frames(submission, kind):
    call, named = CALLS[kind]
    impl = Implementation(LocalBackend("student", submission))
    with pytest.raises(pytest.fail.Exception) as info:
        call(impl)
    message = timeouts.timeout_message(info, submission)
    first, *rest = message.splitlines()
    assert first == f"Timeout (>2.5s): the test took longer than its limit of 2.5 s while your code was running {named}"
    frames = [line.strip() for line in rest[1:]]
    line_of = {text.strip().split()[0]: n for n, text in enumerate(SLOW.splitlines(), 1) if text.startswith("    ")}
    assert frames[-2:] == [f"slowcode/slow.py:{line_of['return']} in deep", f"slowcode/slow.py:{line_of['raise']} in deeper"]
    assert not any(part in message for part in HARNESS_FRAME), message
    assert str(submission) not in message, message


def test_frames_in_the_submissions_folder_before_the_call_entered_it_are_not_shown(submission):
    # a student's own pytest run: the tests live in the submission's folder too
    (submission / "caller_test.py").write_text("def call(impl):\n    return impl.run_merge([1, 2], (1, 2), 3)\n")
    sys.path.insert(0, str(submission))
    from caller_test import call

    with pytest.raises(pytest.fail.Exception) as info:
        call(Implementation(LocalBackend("student", submission)))
    frames = [line.strip() for line in timeouts.timeout_message(info, submission).splitlines()[2:]]
    assert frames[0].startswith("adapters.py:") and frames[-1].startswith("slowcode/slow.py:"), frames


def run_through(items, in_the_test: bool) -> None:
    """Read ``items`` to the end; ``in_the_test``: time out in the test, holding the first."""
    for _ in items:
        if in_the_test:
            pytest.fail(PYTEST_TIMEOUT)


STREAMED = "encode_iterable(...) of the tokenizer from adapters.get_tokenizer(...)"


@pytest.mark.parametrize("in_the_test, told", [
    (False, f"while your code was running {STREAMED}"),
    (True, "while the test itself was running"),  # the submission's generator is only suspended
])
def test_a_timeout_while_a_stream_is_read_names_the_stream_only_while_the_submission_runs(submission, in_the_test, told):
    tokenizer = Implementation(LocalBackend("student", submission)).get_tokenizer({}, [], None)
    with pytest.raises(pytest.fail.Exception) as info:
        run_through(tokenizer.encode_iterable(["x"]), in_the_test)
    first, *rest = timeouts.timeout_message(info, submission).splitlines()
    assert first == f"Timeout (>2.5s): the test took longer than its limit of 2.5 s {told}"
    assert bool(rest) is not in_the_test and not any(part in line for line in rest for part in HARNESS_FRAME), rest


def test_a_timeout_in_the_test_after_a_call_that_failed_says_the_test_itself_was_running(submission):
    impl = Implementation(LocalBackend("student", submission))
    with pytest.raises(pytest.fail.Exception):
        impl.run_merge([1, 2], (1, 2), 3)  # the submission's own failure, told with its call
    with pytest.raises(pytest.fail.Exception) as info:
        pytest.fail(PYTEST_TIMEOUT)
    assert timeouts.timeout_message(info, submission).endswith("while the test itself was running")


def test_a_timeout_outside_the_submission_says_the_test_itself_was_running(submission):
    with pytest.raises(pytest.fail.Exception) as info:
        pytest.fail(PYTEST_TIMEOUT)
    message = timeouts.timeout_message(info, submission)
    assert message == "Timeout (>2.5s): the test took longer than its limit of 2.5 s while the test itself was running"


def test_a_timeout_while_a_result_is_checked_says_the_call_had_returned(submission, monkeypatch):
    class SlowToCheck(values.Shape):
        def check(self, value, where):
            raise pytest.fail.Exception(PYTEST_TIMEOUT)

    monkeypatch.setitem(registry.ADAPTERS, "run_pretokenize", registry.Adapter(SlowToCheck("list[str]")))
    with pytest.raises(pytest.fail.Exception) as info:
        Implementation(LocalBackend("student", submission)).run_pretokenize("x")
    message = timeouts.timeout_message(info, submission)
    assert message == ("Timeout (>2.5s): the test took longer than its limit of 2.5 s"
                       " while the harness was checking what your adapters.run_pretokenize(...) returned")


def test_a_timeout_while_a_streamed_item_is_checked_says_the_stream_had_sent_it(submission, monkeypatch):
    class SlowToCheck(values.Shape):
        def check(self, value, where):
            raise pytest.fail.Exception(PYTEST_TIMEOUT)

    monkeypatch.setattr(values, "INT", SlowToCheck("int"))
    tokenizer = Implementation(LocalBackend("student", submission)).get_tokenizer({}, [], None)
    with pytest.raises(pytest.fail.Exception) as info:
        run_through(tokenizer.encode_iterable(["x"]), in_the_test=False)
    assert timeouts.timeout_message(info, submission) == (
        f"Timeout (>2.5s): the test took longer than its limit of 2.5 s while the harness was checking what your {STREAMED} returned")


def test_other_failures_are_no_timeouts(submission):
    with pytest.raises(pytest.fail.Exception) as info:
        pytest.fail("Timeout in your own words")
    assert timeouts.timeout_message(info, submission) is None


def test_the_stack_dump_of_other_threads_is_taken_out_of_captured_output():
    dump = "+++++ Timeout +++++\n~~~ Stack of Thread-1 (_drain) (1) ~~~\n  File \"/x/sandbox/process.py\"\n+++++ Timeout +++++\n"
    assert timeouts.without_stack_dump(f"printed before\n{dump}printed after\n") == "printed before\nprinted after\n"


def test_the_timer_ends_a_hypothesis_test_at_once_with_pytest_timeouts_text():
    """Hypothesis replays a failing example ('Failed' included), which hangs again with no
    alarm left: the timer's exception must be one Hypothesis lets through."""
    from types import SimpleNamespace

    from hypothesis.core import failure_exceptions_to_catch

    assert not issubclass(timeouts.TestTimeout, failure_exceptions_to_catch())
    item, settings = SimpleNamespace(), SimpleNamespace(method="signal", timeout=0.05, disable_debugger_detection=True)
    timer = timeouts.SignalTimer()
    timer.in_call = True  # the test's call phase
    assert timer.pytest_timeout_set_timer(item, settings) is True
    try:
        with pytest.raises(timeouts.TestTimeout) as info:
            for _ in range(200):
                time.sleep(0.01)
    finally:
        item.cancel_timeout()
    assert timeouts.timeout_limit(info) == "0.05"


def test_the_timer_is_cancelled_through_pytest_timeouts_public_hook():
    """The timer set here is cancelled by this plugin's own ``pytest_timeout_cancel_timer``
    (a public hook), not by pytest-timeout finding an attribute it sets on the item."""
    from types import SimpleNamespace

    item = SimpleNamespace(stash=pytest.Stash())
    settings = SimpleNamespace(method="signal", timeout=0.05, disable_debugger_detection=True)
    timer = timeouts.SignalTimer()
    assert timer.pytest_timeout_set_timer(item, settings) is True
    del item.cancel_timeout  # however pytest-timeout keeps its own timers
    assert timer.pytest_timeout_cancel_timer(item) is True
    time.sleep(0.15)  # past the limit: no alarm
    assert timer.pytest_timeout_cancel_timer(item) is None  # nothing left of it to cancel


def test_a_timeout_while_fixtures_are_set_up_is_a_failure_pytest_keeps_as_the_fixtures_error():
    """In setup or teardown the timer raises pytest's own failure: pytest caches it as the
    fixture's error (each later test needing the fixture fails at once with it), where a
    TestTimeout would leave the fixture half made (an internal AssertionError in every later
    test using it)."""
    from types import SimpleNamespace

    item, settings = SimpleNamespace(), SimpleNamespace(method="signal", timeout=0.05, disable_debugger_detection=True)
    assert timeouts.SignalTimer().pytest_timeout_set_timer(item, settings) is True
    try:
        with pytest.raises(timeouts.FixtureTimeout) as info:
            for _ in range(200):
                time.sleep(0.01)
    finally:
        item.cancel_timeout()
    assert isinstance(info.value, pytest.fail.Exception)  # an outcome pytest's fixtures catch and keep
    assert timeouts.timeout_limit(info) == "0.05"


@pytest.mark.parametrize("kind", [timeouts.TestTimeout, timeouts.FixtureTimeout])
def test_the_limit_of_a_timeout_the_harness_raised_is_the_one_it_carries(kind):
    timeout = kind("Timeout (>9.0s) from pytest-timeout.")  # its text says another limit: not read
    timeout.limit = 2.5
    assert timeouts.timeout_limit(raised(timeout)) == "2.5"


def test_the_limit_of_pytest_timeouts_own_failure_is_read_from_its_message():
    assert timeouts.timeout_limit(raised(pytest.fail.Exception("Timeout (>4.0s) from pytest-timeout."))) == "4.0"
    assert timeouts.timeout_limit(raised(pytest.fail.Exception("other"))) is None


def raised(error: BaseException) -> pytest.ExceptionInfo:
    """``error`` as pytest sees it once raised."""
    with pytest.raises(BaseException) as info:
        raise error
    return info
