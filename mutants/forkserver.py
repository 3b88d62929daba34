"""The fork server behind the meta-test's pytest runs (``python -m mutants.forkserver``).

Started by :class:`mutants.runner.ForkServer` with the working directory and environment a
``python -m pytest`` run would get, it imports once what every run imports anyway (pytest and
what its built-in plugins import, the installed pytest plugins such as hypothesis's and pytest-timeout,
tiktoken with GPT-2's encoding loaded, regex, yaml) and then forks one FRESH child per run:
the child starts its own session (so a timeout kills everything it started), sends its
output (fd 1 and 2) to the file named in the request, and calls pytest's console entry point
with the given arguments, as ``python -m pytest ARGS`` would (plus ``-W`` filters for
pytest's warnings about the plugins imported here). A child is never reused
(mutants share module names). Nothing of this repository (the harness, its plugins, the
tests, the reference, a submission) is imported here: every run imports those itself.

``--pycache DIR``: the runs write and read bytecode under DIR (``sys.pycache_prefix``), even
where PYTHONDONTWRITEBYTECODE is set, so the harness, the tests and the reference are compiled
(and the tests' asserts rewritten) once, not in every run; nothing is written beside the sources.

Protocol, one JSON object per line: requests on stdin ``{"run": ID, "args": [...], "out":
PATH}`` or ``{"kill": ID}``; replies on stdout: ``{"ready": [...]}`` once the imports are
done, then ``{"id": ID, "code": EXIT_CODE}`` when a run ends (``-N``: killed by signal N). At end of input every running child's session is killed
and the server exits.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import importlib.metadata
import inspect
import json
import os
import selectors
import signal
import sys
import traceback

PRELOAD = ("pytest", "hypothesis", "tiktoken", "tiktoken_ext.openai_public", "regex", "yaml")
# what pytest's built-in plugins import beyond ``import pytest`` (most of their cost): named
# here, as pytest's own list of its plugins is private
STDLIB_PRELOAD = ("unittest", "difflib", "xml.etree.ElementTree", "faulthandler", "tracemalloc")
REWRITE_WARNING = "Module already imported so cannot be rewritten; "  # pytest 9's text
_PR_SET_PDEATHSIG = 1


def preload() -> frozenset[str]:
    """Import what every pytest run imports; returns the names of the modules imported."""
    before = set(sys.modules)
    for name in PRELOAD:
        importlib.import_module(name)
    for name in STDLIB_PRELOAD:
        importlib.import_module(name)
    for entry_point in importlib.metadata.entry_points(group="pytest11"):
        try:
            entry_point.load()
        except Exception:  # a broken plugin fails each run as it would have anyway
            pass
    try:
        import tiktoken

        tiktoken.get_encoding("gpt2")  # a test that needs it finds it in tiktoken's registry
    except Exception:  # files missing: the tests that need them say so, as without the server
        pass
    # inspect's file -> module table, for every module imported so far: a run's first failure
    # report (inspect.getmodule, via pytest's source lookup) would otherwise rebuild it (~0.15 s)
    inspect.getmodule(preload, __file__)
    return frozenset(set(sys.modules) - before)


def plugin_modules() -> set[str]:
    """Top-level modules and packages of the distributions that install a pytest plugin
    (a ``pytest11`` entry point): the ones pytest marks for assertion rewriting."""
    names = set()
    for dist in importlib.metadata.distributions():
        if not any(ep.group == "pytest11" for ep in dist.entry_points):
            continue
        for file in dist.files or ():
            parts = file.parts
            if len(parts) == 1 and parts[0].endswith(".py"):
                names.add(parts[0][:-3])
            elif len(parts) == 2 and parts[1] == "__init__.py":
                names.add(parts[0])
    return names


def quiet_rewrite_warnings(preloaded: frozenset[str]) -> list[str]:
    """``-W`` options for a run: pytest marks installed plugins' packages (hypothesis,
    pytest_timeout, ...) for assertion rewriting and warns when one is already imported; here
    they are imported on purpose, before the run (their own asserts, not the tests', lose
    rewriting). Other modules still warn; a pytest whose text differs warns for these too."""
    return [arg for name in sorted(plugin_modules() & preloaded)
            for arg in ("-W", f"ignore:{REWRITE_WARNING}{name}:pytest.PytestAssertRewriteWarning")]


def _die_with_server() -> None:
    """SIGKILL this process when the server ends (Linux prctl; best effort elsewhere)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _child(args: list[str], out: str, quiet: list[str], pycache: str | None) -> None:
    """In the forked child: own session, output to ``out``, bytecode cached under ``pycache``
    (if given), ``python -m pytest ARGS``; never returns."""
    code = 70
    try:
        os.setsid()
        _die_with_server()
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 1024)
        import pytest
        import pytest.__main__

        if pycache:  # the runs' shared cache: what they import is compiled (and rewritten) once
            sys.pycache_prefix, sys.dont_write_bytecode = pycache, False
        sys.argv = [pytest.__main__.__file__, *quiet, *args]
        code = int(pytest.console_main())
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


class Server:
    """Forks a child per ``run`` request and reports each one's exit code."""

    def __init__(self, preloaded: frozenset[str], replies: int, pycache: str | None = None) -> None:
        self.quiet, self.replies, self.pycache = quiet_rewrite_warnings(preloaded), replies, pycache
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, tuple[object, int]] = {}  # run id -> (pidfd, pid)

    def start(self, run_id: object, args: list[str], out: str) -> None:
        pid = os.fork()
        if pid == 0:
            _child(args, out, self.quiet, self.pycache)
        pidfd = os.pidfd_open(pid)
        self.running[pidfd] = (run_id, pid)
        self.selector.register(pidfd, selectors.EVENT_READ, "child")

    def kill(self, run_id: object) -> None:
        for run, pid in self.running.values():
            if run == run_id:
                _kill_session(pid)

    def finish(self, pidfd: int) -> None:
        """A child ended: kill what is left of its session (its pid is still held by the
        zombie, so the group id cannot have been reused), reap it, reply."""
        run_id, pid = self.running.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _kill_session(pid)
        _, status = os.waitpid(pid, 0)
        self.reply({"id": run_id, "code": os.waitstatus_to_exitcode(status)})

    def reply(self, message: dict) -> None:
        os.write(self.replies, (json.dumps(message) + "\n").encode())

    def handle(self, line: bytes) -> None:
        request = json.loads(line)
        if "run" in request:
            self.start(request["run"], [str(a) for a in request["args"]], str(request["out"]))
        elif "kill" in request:
            self.kill(request["kill"])
        else:
            raise ValueError(f"fork server: unknown request {request!r}")

    def serve(self) -> None:
        """Until end of input; then every running child's session is killed and reaped."""
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, "requests")
        pending = b""
        while True:
            for key, _ in self.selector.select():
                if key.data == "child":
                    self.finish(key.fd)
                    continue
                chunk = os.read(0, 1 << 16)
                if not chunk:
                    return self.stop()
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in filter(None, lines):
                    self.handle(line)

    def stop(self) -> None:
        for pidfd in list(self.running):
            _kill_session(self.running[pidfd][1])
            self.finish(pidfd)


def _kill_session(pid: int) -> None:
    """SIGKILL to the child's session (its group id is its pid) and to the child itself (in
    case it was killed before it could start its session)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def main(argv: list[str] | None = None) -> None:
    """``python -m mutants.forkserver [--pycache DIR]``."""
    argv = sys.argv[1:] if argv is None else argv
    pycache = argv[1] if argv[:1] == ["--pycache"] and len(argv) == 2 else None
    if argv and pycache is None:
        raise SystemExit(f"usage: python -m mutants.forkserver [--pycache DIR], not {argv}")
    replies = os.dup(1)
    os.dup2(2, 1)  # whatever an import prints goes to the error log, not into the replies
    server = Server(preload(), replies, pycache)
    gc.freeze()  # what is preloaded lives as long as a run: no collection in a run walks it again
    server.reply({"ready": sorted(PRELOAD)})
    server.serve()


if __name__ == "__main__":
    main()
