"""The circuit breaker: a function of the submission that used up its time on several tests in
a row is not called again.

A grading has a total time budget. Code that hangs in one function would spend the whole of
it waiting out that function's limit test after test (830 cases, 60 s each), and the tests of
the other functions would never run. So when calls to one function end by a limit on
``after`` tests in a row (a test over its time limit or a worker call over its deadline
while that function was running, or its worker killed by a limit: :class:`TimeLost`; or a
``MemoryError`` it raised at the memory limit, which takes as long to reach every time), each
later call to it fails at once with one line (:class:`NotCalled`); the tests of the other
functions run as usual. A test in which the function returned (or raised on its own) resets
its count. Given ``lost_limit``, a function whose tests that ran into a limit took that many
seconds in all is not called again either, in a row or not: correct code too slow for the
large inputs of some tests (an encoder applying every GPT-2 merge to every pre-token) timed
out at 60 s in tests between others it passed, spent the whole budget so, and the tests of
every part after it were not reached.

A function tripped that had returned in some test is slow, not stuck: once every other test
has run, the grading gives its refused tests a second chance (:meth:`Breaker.pardon`, then
``grader.grading_plugin``), so that the small inputs it handles in seconds still score; the
rule of tests in a row holds again, the rule of lost seconds not (the tests it protected have
run). A function that never returned is never called again.

"Function" is the call the harness makes: an adapter (``run_merge``), or a method of the
object an adapter returned (``get_tokenizer(...).encode``). The grading plugin makes the
breaker (``harness.keys.BREAKER``) and ends each test (:meth:`Breaker.end_test`);
:class:`harness.impl.Implementation` asks it before each call and tells it how the call ended.
"""

from __future__ import annotations


class TimeLost:
    """Mixed into the exceptions that mean a call ran into a limit (a deadline, or a limit
    that killed its worker): ``harness.timeouts.TestTimeout``, the sandbox's ``WorkerTimeout``
    and its deaths by a limit. ``limit_kind`` says which, for the breaker's line."""

    limit_kind = "timed out"


class NotCalled(AssertionError):
    """A call the breaker refused: its function ran into a limit on ``after`` tests in a row.
    The message is the whole failure (one line)."""

    def __init__(self, message: str, summary: str, function: str = "") -> None:
        super().__init__(message)
        self.summary = summary  # "run_merge timed out on 3 tests in a row"
        self.function = function  # "run_merge"


class Breaker:
    """Counts, per function, the tests in a row in which a call to it ran into a limit."""

    def __init__(self, after: int, lost_limit: float | None = None) -> None:
        self.after = after  # 0: never trips
        self.lost_limit = lost_limit  # seconds a function's tests may lose to limits in all (None: no such rule)
        self.lost_seconds: dict[str, float] = {}  # function -> seconds of its tests that ran into a limit
        self.streak: dict[str, list[str]] = {}  # function -> limit kinds of its tests in a row
        self.tripped: dict[str, str] = {}  # function -> "run_merge timed out on 3 tests in a row"
        self.returned: set[str] = set()  # functions that returned (or raised on their own) in some test
        self.pardoned: set[str] = set()  # tripped, then called again (pardon): no lost-seconds rule for them
        self._lost: dict[str, str] = {}  # this test: function -> limit kind
        self._fine: set[str] = set()  # this test: functions whose calls ended on their own

    def check(self, function: str) -> None:
        """Raise :class:`NotCalled` if ``function`` is no longer called."""
        __tracebackhide__ = True
        summary = self.tripped.get(function)
        if summary is not None:
            raise NotCalled(
                f"not run: {summary}; this test calls it, so it fails at once "
                f"(the grading stops calling a function that ran into a limit on {self.after} tests in a row"
                + (f" or in tests of {self.lost_limit:.0f} s in all)" if self.lost_limit is not None else ")"),
                summary,
                function,
            )

    def ended(self, function: str, error: BaseException | None) -> None:
        """A call to ``function`` ended: returned (``error`` None) or raised ``error``."""
        if isinstance(error, TimeLost):
            self._lost[function] = error.limit_kind
        elif isinstance(error, MemoryError):  # the memory limit, met inside the call (not a kill)
            self._lost[function] = "ran out of memory"
        elif not isinstance(error, NotCalled):
            self._fine.add(function)

    def end_test(self, seconds: float = 0.0) -> None:
        """The test is over (it took ``seconds``): count the functions that ran into a limit in
        it, reset the others; a function at ``after`` tests in a row, or whose tests that ran
        into a limit took ``lost_limit`` seconds in all, is tripped."""
        self.returned |= self._fine
        for function in self._fine - set(self._lost):
            self.streak.pop(function, None)
        for function, kind in self._lost.items():
            kinds = self.streak.setdefault(function, [])
            kinds.append(kind)
            lost = self.lost_seconds[function] = self.lost_seconds.get(function, 0.0) + seconds
            if not self.after or function in self.tripped:
                continue
            if len(kinds) >= self.after:
                what = kinds[0] if len(set(kinds)) == 1 else "timed out or was stopped by a limit"
                self.tripped[function] = f"{function} {what} on {len(kinds)} tests in a row"
            elif self.lost_limit is not None and lost >= self.lost_limit and function not in self.pardoned:
                self.tripped[function] = f"{function} ran into limits in tests that took {lost:.0f} s in all"
        self._lost, self._fine = {}, set()

    def pardon(self) -> dict[str, str]:
        """Call again the tripped functions that returned in some test (slow, not stuck), each
        from a clean count of tests in a row; returns them with the summaries they were
        tripped with. The lost-seconds rule no longer trips them."""
        pardoned = {f: summary for f, summary in self.tripped.items() if f in self.returned}
        for function in pardoned:
            del self.tripped[function]
            self.streak.pop(function, None)
        self.pardoned |= set(pardoned)
        return pardoned
