"""The function search's child process, run with ``python -c`` inside a copy of the handout
(standard library only: it must not import this repository's grader).

``python -c SOURCE CASES.pickle OUT.jsonl``: import every module of the handout outside
``student/``, and try every function and class it defines (but tests under Hypothesis's
``@given``, which return nothing) as the student's implementation:
each is called with the arguments of each graded function (in any order; a file argument
also as the file's text), and so are callables and ``encode``/``decode`` methods of what it
returns. A call whose result equals the reference's is written to ``OUT.jsonl``. Each
candidate runs in a forked process with a time and memory limit, so a function that
hangs, exits or changes global state affects nothing else.
"""

import importlib
import inspect
import itertools
import json
import os
import pickle
import resource
import signal
import sys
import time
from pathlib import Path

TIME_PER_CANDIDATE = 20.0  # seconds, all its calls together
TIME_PER_CALL = 5.0
MEMORY = 2 << 30  # bytes a candidate may add to the address space


class _CallTimeout(BaseException):
    pass


def plain(value, depth=0):
    """``value`` as plain data (lists become tuples), or a marker that equals nothing:
    results compare by value only, never by a type's own ``__eq__``."""
    if depth > 6:
        return _NOTHING
    kind = type(value)
    if kind in (int, str, bytes, bool, type(None)):
        return value
    if kind is float:
        return round(value, 9)
    if kind in (list, tuple):
        return tuple(plain(v, depth + 1) for v in value[:100_000])
    if kind is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in list(value.items())[:100_000]}
    return _NOTHING


class _Nothing:
    def __eq__(self, other):
        return False

    def __hash__(self):
        return 0


_NOTHING = _Nothing()


def modules(tree: Path):
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree)
        if rel.parts[0] == "student" or any(p.startswith(".") for p in rel.parts):
            continue
        name = ".".join(rel.with_suffix("").parts)
        yield rel.as_posix(), name.removesuffix(".__init__")


def candidates(tree: Path):
    """(where, callable) of every function and class defined in the handout outside student/."""
    seen = set()
    for rel, name in modules(tree):
        try:
            module = importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a module that cannot be imported offers nothing
            continue
        for attr, value in sorted(vars(module).items()):
            target = getattr(value, "__wrapped__", value)  # pytest fixtures: the function itself
            if id(target) in seen or not callable(target):
                continue
            home = getattr(target, "__module__", None)
            if home != module.__name__ or _hypothesis_test(target):
                continue
            seen.add(id(target))
            yield f"{rel}:{attr}", target
            if inspect.isclass(target):
                for meth_name, meth in sorted(vars(target).items()):
                    if isinstance(meth, (staticmethod, classmethod)):
                        yield f"{rel}:{attr}.{meth_name}", getattr(target, meth_name)


def _hypothesis_test(fn) -> bool:
    """Whether ``fn`` is a test wrapped by Hypothesis's ``@given`` (the mark ``@given`` sets,
    which ``harness.plugin.is_hypothesis_test`` reads too): it returns None or raises
    (Hypothesis fails a test that returns anything else), so it cannot reproduce a graded
    function, and calling it would run its whole search for examples."""
    return bool(getattr(fn, "is_hypothesis_test", False))


def arguments(case):
    """The argument tuples to try: the graded function's own, in every order, and with a
    file argument replaced by the file's text."""
    variants = [tuple(case["args"])]
    if case.get("file_arg") is not None:
        i = case["file_arg"]
        text = Path(case["args"][i]).read_bytes().decode("utf-8")
        variants.append(tuple(text if k == i else a for k, a in enumerate(case["args"])))
    out = []
    for args in variants:
        for perm in itertools.permutations(args):
            if perm not in out:
                out.append(perm)
    return out


def fits(fn, args) -> bool:
    try:
        inspect.signature(fn).bind(*args)
        return True
    except (TypeError, ValueError):
        return not args and inspect.isbuiltin(fn)


def call(fn, args):
    signal.setitimer(signal.ITIMER_REAL, TIME_PER_CALL)
    try:
        result = fn(*args)
        if inspect.isgenerator(result):
            result = list(itertools.islice(result, 1_000_000))
        return result
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def follow_ups(result, case):
    """What a result offers beyond itself: a callable called with the follow-up arguments,
    an object's ``encode``/``decode``/``encode_iterable`` methods."""
    then = case.get("then")
    if then is None:
        return
    method, rest = then
    if callable(result) and not inspect.isclass(result):
        yield f"(...)({', '.join(map(_short, rest))})", result, rest
    bound = getattr(result, method, None)
    if callable(bound):
        yield f".{method}({', '.join(map(_short, rest))})", bound, rest


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def search_one(where, fn, cases, out) -> None:
    deadline = time.monotonic() + TIME_PER_CANDIDATE
    for case in cases:
        want = plain(case["expected"])
        for args in arguments(case):
            if time.monotonic() > deadline:
                return
            if not fits(fn, args):
                continue
            try:
                result = call(fn, args)
            except BaseException:  # noqa: BLE001 - any failure means: not this way
                continue
            shown = f"{where.split(':')[1]}({', '.join(map(_short, args))})"
            if plain(result) == want:
                out.write(json.dumps({"function": where, "graded": case["name"], "call": shown}) + "\n")
                out.flush()
                return
            for how, follow, rest in follow_ups(result, case):
                try:
                    second = call(follow, tuple(rest))
                except BaseException:  # noqa: BLE001
                    continue
                if plain(second) == want:
                    out.write(json.dumps({"function": where, "graded": case["name"], "call": shown + how}) + "\n")
                    out.flush()
                    return


def _alarm(signum, frame):
    raise _CallTimeout()


def main() -> None:
    tree = Path.cwd()
    sys.path.insert(0, str(tree))
    cases = pickle.loads(Path(sys.argv[1]).read_bytes())
    out_path = sys.argv[2]
    data_dir = Path(sys.argv[1]).parent / "data"
    data = {p: p.read_bytes() for p in data_dir.iterdir()}  # put back before each candidate: one may write them
    found = list(candidates(tree))
    with open(out_path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"candidates": len(found)}) + "\n")
    for where, fn in found:
        pid = os.fork()
        if pid == 0:  # the candidate's own process, in a session of its own: whatever it starts ends with it
            try:
                os.setsid()
                data_dir.mkdir(exist_ok=True)
                for path, content in data.items():
                    path.unlink(missing_ok=True)
                    path.write_bytes(content)
                in_use = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
                resource.setrlimit(resource.RLIMIT_AS, (in_use + MEMORY, in_use + MEMORY))
                signal.signal(signal.SIGALRM, _alarm)
                sys.stdout = sys.stderr = open(os.devnull, "w")
                with open(out_path, "a", encoding="utf-8") as out:
                    search_one(where, fn, cases, out)
            finally:
                os._exit(0)
        waited = time.monotonic() + TIME_PER_CANDIDATE + 5
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > waited:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        try:  # what the candidate started (one wrote .hypothesis into the tree after the search ended)
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


if __name__ == "__main__":
    main()
