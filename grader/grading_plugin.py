"""pytest plugin for ``python -m grader grade``: groups, limits and a machine-readable report.

Loaded by the grade command (``-p grader.grading_plugin``) and by this repository's
``addopts``; it grades only when given a policy and ``--grading-report``: the policy the
grade command loaded and passed down (``--grading-policy``, :func:`grader.config.write_policy`),
or a ``grading.yaml`` (``--grading-config``). The policy goes to ``config.stash[POLICY]``
(:mod:`harness.keys`), where the speed check, the sandbox and the diagnosis read it. It checks that
``grading.yaml``'s selections match the collected tests before any test runs, gives each
test its timeout, and writes every test's outcome to ``--grading-report`` as JSON: the
whole report after collection and at the end, and each finished test's entry in between to
its journal (:mod:`grader.journal`), so that a run stopped early keeps what was graded.

Time: given the grading's deadline (``--grading-deadline``, from ``grade``'s time budget), a
test never runs past it (its timeout is cut to the time left: if that ends it, it is "not
finished") and the tests after it are "not reached", each saying so; a group that spent more
than its share of the budget lets the other groups' tests go first (:mod:`grader.fair_share`); the circuit breaker
(:mod:`harness.breaker`, ``grading.yaml`` ``timeouts_in_a_row``) stops calling a function of
the submission that ran into a limit on that many tests in a row, or in tests that took
:data:`grader.budget.LOST_SHARE` of the budget in all; once every other test has run, the
refused tests of such a function that had returned in some test (slow, not stuck) run again,
each with at most :data:`grader.budget.SECOND_CHANCE` seconds. SIGTERM (what ``grade`` sends when
it is stopped) and SIGINT stop every worker, remove their sandboxes and end the run at once.

It declares ``pytest_bpe_known_bug`` (:mod:`grader.hooks`) and, in any run, asks it about
every failed test whose calls the harness recorded (in a grading, once every test has run:
:mod:`grader.deferred_diagnosis`): ``mutants.plugin`` answers with the description of a known
bug, and the failure gets the line ``this matches a known bug: ...``. The report is typed
(:mod:`grader.report`): each case carries, as fields, the known bug its failure matches, the
limits it ran into, the submission's load error and the function a ``NotImplementedError``
said is unwritten, found here, so that nothing after reads them back out of the failure text.
"""

from __future__ import annotations

import gc
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from harness import impl, keys
from harness.breaker import Breaker, NotCalled
from harness.plugin import not_implemented
from harness.raised import note_where_raised
from harness.timeouts import timeout_limit
from sandbox import registry

from . import hooks, second_chance
from .budget import LOST_SHARE
from .fair_share import Shares, run_tests
from .config import Config, ConfigError, check_selection, load_config, read_policy
from .case_facts import note_failure, skip_reason
from .deferred_diagnosis import Deferred
from .journal import Journal
from .report import Case, RunReport, known_bug_line, write_run_report

MAX_OUTPUT = 4000  # characters of failure text kept per test
SESSION_PLUGIN = "bpe-grading-session"  # the name GradingSession is registered under
MIN_TEST_TIME = 1.0  # seconds: with less left before the deadline, a test is not started
# user properties this plugin passes from a test's report hooks to its case's fields
KNOWN_BUG, TIMED_OUT, NOT_IMPLEMENTED = "known_bug", "timed_out", "not_implemented"
REFUSED = "refused"  # the function whose call the breaker refused (the case's "not_called" says why)
FUNCTION_NAME = re.compile(r"[A-Za-z_][\w.]*")  # what a NotImplementedError's message names


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpe-grading", "BPE grading (used by python -m grader grade)")
    group.addoption("--grading-config", default=None, help="grading.yaml to apply")
    group.addoption("--grading-policy", default=None, help="the policy the grade command loaded and passed down")
    group.addoption("--grading-report", default=None, help="where to write the JSON report")
    group.addoption("--grading-deadline", type=float, default=None, help="when the grading must end (seconds since the epoch)")
    group.addoption("--grading-budget", type=float, default=None, help="the grading's time budget, seconds (named in the tests not reached)")
    group.addoption(
        "--grading-partial", action="store_true", default=False,
        help="a chosen subset of the suite runs: groups (and overrides) with no test in it are left out, not an error",
    )


def _peak_rss_mb() -> float:
    """This (the trusted test) process's peak resident memory so far, in MB."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class GradingSession:
    def __init__(self, config: pytest.Config, policy: Config) -> None:
        self.config = config
        self.report_path = Path(config.getoption("grading_report"))
        self.partial = bool(config.getoption("grading_partial"))
        self.policy = policy
        self.tests: dict[str, Case] = {}
        self.error: str | None = None
        self.remaining: dict[str, int] = {}
        self.order: list[str] = []  # the groups of this run in policy order: their progress lines' order
        self.said = 0  # progress lines printed so far (the first groups of self.order)
        self.visible_ended = 0  # visible tests finished
        self.started = time.monotonic()
        self.journal = Journal(self.report_path)
        self.saw_hidden = False  # a test with hidden feedback ran since the workers started
        deadline = config.getoption("grading_deadline")
        self.deadline = None if deadline is None else time.monotonic() + (deadline - time.time())
        self.budget = config.getoption("grading_budget")
        self.capped: set[str] = set()  # tests whose timeout was cut to the time left
        self.refused: dict[str, str] = {}  # node id -> the function the breaker refused it a call to
        self.again = False  # the second chance is under way (_second_chance)
        lost_limit = LOST_SHARE * self.budget if self.budget else None
        self.breaker = config.stash[keys.BREAKER] = Breaker(policy.time.timeouts_in_a_row, lost_limit)
        self.noted: dict = {}  # the facts journaled last (see _note_facts)
        self.deferred = Deferred()  # known-bug diagnoses put off until every test has run
        try:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._terminated)
        except ValueError:  # not the main thread (pytest run in-process by a tool)
            pass

    def _terminated(self, signum, frame) -> None:
        """Stopped from outside: end every worker (their processes and sandboxes) and exit;
        the journal already holds every finished test."""
        if self.tests:  # collected: the report as it stands, with the grader's peak memory and isolation so far
            try:
                self.write(incomplete=True)
            except Exception:
                pass
        self.journal.close()
        registry.close_all()
        os._exit(128 + signum)

    def write(self, incomplete: bool = False, exitstatus: int | None = None, seconds: float | None = None) -> None:
        loaded = self.config.stash.get(keys.LOADED, None)
        write_run_report(self.report_path, RunReport(
            list(self.tests.values()), self.partial, _peak_rss_mb(), self.config.stash.get(keys.CONFINEMENT, None) or None,
            dict(loaded) if loaded else None, self.error, incomplete, exitstatus, seconds,
        ))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        collected = {item.nodeid: {m.name for m in item.iter_markers()} for item in items}
        try:
            assigned = check_selection(self.policy, collected, partial=self.partial)
        except ConfigError as err:
            self.error = str(err)
            self.write()
            pytest.exit(str(err), returncode=2)
        for item in items:
            group = assigned[item.nodeid]
            weight, visibility, timeout = self.policy.test_policy(group, item.nodeid)
            item.add_marker(pytest.mark.timeout(timeout))
            self.tests[item.nodeid] = Case(item.nodeid, group.name, weight, visibility)
            self.remaining[group.name] = self.remaining.get(group.name, 0) + 1
        # visible tests first: a worker never learns hidden inputs before a test whose
        # feedback the student sees (see pytest_runtest_setup for the guard); the others by
        # group in policy order, so that the groups finish (and are reported) in that order
        index = {g.name: i for i, g in enumerate(self.policy.groups)}
        self.order = sorted(self.remaining, key=index.__getitem__)

        def phase(item: pytest.Item) -> tuple[bool, int]:
            test = self.tests[item.nodeid]
            hidden = test.visibility != "visible"
            return hidden, index[test.group] if hidden else 0

        items.sort(key=phase)
        self.write(incomplete=True)
        # what imports and collection made lives until the run ends: out of the collector's
        # sight, each of its full passes during the tests (and pytest's five at the end) no
        # longer walks pytest's, hypothesis's and the suite's objects again (~0.35 s of CPU of
        # a ~1.4 s test run of 10 tests)
        gc.freeze()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """Under a deadline, the tests run in the order of the groups' shares of the time left
        (:mod:`grader.fair_share`); otherwise (and on collection errors) pytest's own loop."""
        if self.deadline is None or session.testsfailed or session.config.option.collectonly:
            return None
        points = {g.name: g.points for g in self.policy.groups if g.name in self.remaining}
        shares = Shares.of_points(points, max(self.deadline - time.monotonic(), 0.0))
        self.deferred.start()
        run_tests(session, lambda item: self.tests[item.nodeid].group, shares,
                  lambda item, share: self.tests[item.nodeid].properties.update(waited=round(share)))
        self._second_chance(session)
        for nodeid, bug in self.deferred.diagnose(self.deadline):  # each case journaled again with its known bug
            test = self.tests[nodeid]
            test.known_bug, test.output = bug, f"{test.output}\n{known_bug_line(bug)}"[:MAX_OUTPUT]
            self.journal.add(test)
        return True

    def _second_chance(self, session: pytest.Session) -> None:
        """Once every test has run, the tests the breaker refused for a function that had
        returned in some test run again (:mod:`grader.second_chance`)."""
        if self.deadline is None or self.deadline - time.monotonic() < MIN_TEST_TIME:
            return
        again = second_chance.start_over(session.items, self.tests, self.refused, self.breaker.pardon())
        if again:
            self.capped.difference_update(item.nodeid for item in again)
            self.again = True
            run_tests(session, lambda item: self.tests[item.nodeid].group, Shares({}), items=again)
            second_chance.say_done(again, self.tests)

    def _budget(self) -> str:
        return f"the grading's time budget of {self.budget:g} s" if self.budget else "the grading's time"

    @pytest.hookimpl(hookwrapper=True, tryfirst=True, specname="pytest_runtest_protocol")
    def pytest_cut_timeout_to_deadline(self, item: pytest.Item, nextitem):  # pytest takes only pytest_* names
        """Outside pytest-timeout's wrapper (which reads the test's limit): a limit that would
        end past the deadline is cut to the time left."""
        if self.deadline is not None and item.nodeid in self.tests:
            left = self.deadline - time.monotonic()
            marker = item.get_closest_marker("timeout")
            limit = marker.args[0] if marker is not None and marker.args else None
            if left >= MIN_TEST_TIME and isinstance(limit, (int, float)) and left < limit:
                item.add_marker(pytest.mark.timeout(round(left, 1)), append=False)
                self.capped.add(item.nodeid)
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem) -> bool | None:
        """Past the deadline, a test is not run: it is journaled as not reached, at once."""
        test = self.tests.get(item.nodeid)
        if test is None or self.deadline is None or self.deadline - time.monotonic() >= MIN_TEST_TIME:
            return None
        test.output = f"not reached: {self._budget()} was used up before this test"
        test.properties["not_reached"] = "budget"
        self._finished(test)
        return True

    def _finished(self, test: Case) -> None:
        """``test`` is over: the facts of its failure noted, journaled, and its group's count
        of tests to go updated."""
        note_failure(test)
        self.journal.add(test)
        self._note_facts()
        if self.again:  # its group was counted done at its first run
            return
        self.remaining[test.group] -= 1
        self._say_groups_done()
        if test.visibility == "visible":
            self._say_visible_done()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        test = self.tests.get(item.nodeid)
        if test is None:
            return
        if test.visibility != "visible":
            self.saw_hidden = True
        elif self.saw_hidden:
            # the submission's workers have seen hidden material: none of them may run a test
            # whose feedback is visible (what they print or raise could carry it)
            registry.restart_workers(keep="reference")
            self.saw_hidden = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        test = self.tests.get(report.nodeid)
        if test is None:
            return
        test.duration += report.duration
        timed_out = None
        for key, value in report.user_properties:
            if key == KNOWN_BUG:
                test.known_bug = value
            elif key == TIMED_OUT:
                timed_out = value
            elif key == NOT_IMPLEMENTED:
                test.not_implemented = value
            elif key == REFUSED:
                self.refused[report.nodeid] = value
            else:
                test.properties[key] = value
        if report.failed and report.nodeid in self.capped and timed_out == report.when:
            test.outcome = "not run"  # cut by the deadline, not by its own limit
            test.output = f"not finished: {self._budget()} ran out while this test was running"
            test.properties["not_reached"] = "budget"
        elif test.properties.get("not_reached"):
            pass
        elif report.failed:
            test.outcome = "failed"
            text = report.longreprtext or f"{report.when} failed"
            if report.when != "call":
                text = f"[{report.when}] {text}"
            test.output = (test.output + "\n" + text).strip()[:MAX_OUTPUT]
        elif report.skipped and test.outcome != "failed":
            test.outcome = "skipped"
            test.output = skip_reason(report)[:MAX_OUTPUT]
        elif report.when == "call" and report.passed and test.outcome == "not run":
            test.outcome = "passed"
        if report.when == "teardown":
            self.breaker.end_test(test.duration)
            self._finished(test)

    def _say_groups_done(self) -> None:
        """A progress line for each finished group, in policy order (one waits for the groups
        before it), named by its title as in grade's table."""
        titles = {g.name: g.title for g in self.policy.groups}
        while self.said < len(self.order) and self.remaining[self.order[self.said]] == 0:
            group = self.order[self.said]
            done = [t for t in self.tests.values() if t.group == group]
            passed = sum(t.outcome == "passed" for t in done)
            print(f"[grade] {titles[group]}: {passed}/{len(done)} cases passed", file=sys.stderr, flush=True)
            self.said += 1

    def _say_visible_done(self) -> None:
        """Once the last visible test ended, before the others: how the visible ones went, if
        no group could be reported yet (pytest captures what setup hooks print: said here)."""
        visible = [t for t in self.tests.values() if t.visibility == "visible"]
        self.visible_ended += 1
        if self.visible_ended == len(visible) < len(self.tests) and self.said == 0:
            passed = sum(t.outcome == "passed" for t in visible)
            print(f"[grade] visible tests: {passed}/{len(visible)} cases passed; the others next", file=sys.stderr, flush=True)

    def _note_facts(self) -> None:
        """Journal the grader's peak memory and the isolation in force when they changed, so
        that a run stopped early reports them as they were at its last finished test."""
        facts = {"peak_rss_mb": _peak_rss_mb()}
        confinement = self.config.stash.get(keys.CONFINEMENT, None)
        if confinement:
            facts["isolation"] = confinement
        if facts != self.noted:
            self.noted = facts
            self.journal.note(**facts)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        nothing = exitstatus in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED) and not self.tests
        if self.partial and nothing and self.error is None:  # a path that is not there, a node id matching nothing
            chosen = " ".join(os.path.relpath(a, self.config.rootpath) for a in self.config.args)
            self.error = f"--tests {chosen}: no test there (paths and node ids are relative to the repository, as tests/public/test_primitives.py)"
        self.write(exitstatus=int(exitstatus), seconds=time.monotonic() - self.started)
        self.journal.close()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def _policy(config: pytest.Config) -> Config | None:
    """The policy passed down (``--grading-policy``), else the ``--grading-config`` file's."""
    if config.getoption("grading_policy"):
        return read_policy(config.getoption("grading_policy"))
    if config.getoption("grading_config"):
        return load_config(config.getoption("grading_config"))
    return None


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("grading_report"):
        return
    try:
        policy = _policy(config)
    except ConfigError as err:
        raise pytest.UsageError(str(err)) from None
    if policy is not None:
        config.stash[keys.POLICY] = policy
        config.pluginmanager.register(GradingSession(config, policy), SESSION_PLUGIN)


def _known_bug(item: pytest.Item, call: pytest.CallInfo) -> str | None:
    """The known bug (its description) a failed call whose calls into the submission were
    recorded matches, if any."""
    records = item.stash.get(keys.RECORDS, None)
    if call.when != "call" or not records or call.excinfo.errisinstance(NotImplementedError):
        return None
    grading = item.config.pluginmanager.get_plugin(SESSION_PLUGIN)
    if grading is not None and grading.deferred.defer(item, records):  # diagnosed after the tests
        return None
    return item.config.hook.pytest_bpe_known_bug(item=item, records=records, until=None)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    # tryfirst: the outermost wrapper, so this runs after the harness has shaped the failure
    # (and before it, the frames of an exception the submission raised in this process)
    if call.excinfo is not None and call.when == "call":
        note_where_raised(call.excinfo, Path(item.config.getoption("submission", None) or impl.ROOT))
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.excinfo is None:
        return
    if call.excinfo.errisinstance(NotCalled):  # counted by grade: "the N other tests that call it"
        report.user_properties.append(("not_called", call.excinfo.value.summary))
        report.user_properties.append((REFUSED, call.excinfo.value.function))
        return
    if timeout_limit(call.excinfo) is not None:  # its own limit (or the deadline's cut, see logreport)
        report.user_properties.append((TIMED_OUT, call.when))
    if call.excinfo.errisinstance(NotImplementedError):  # grade's pointer: what to write next
        named = FUNCTION_NAME.match(not_implemented(call.excinfo))
        if named:
            report.user_properties.append((NOT_IMPLEMENTED, named.group()))
    bug = _known_bug(item, call)
    if bug is None:
        return
    report.user_properties.append((KNOWN_BUG, bug))
    line = known_bug_line(bug)
    if isinstance(report.longrepr, str):
        report.longrepr = f"{report.longrepr}\n{line}"
    elif hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection("known bug", line)
