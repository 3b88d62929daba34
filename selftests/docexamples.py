"""The worked examples of the student docstrings, run against the reference solution.

A stub's docstring is its specification, and its ``>>>`` examples must hold for a correct
solution. Each example runs in the globals its own module would give it (so an example that
uses a name its module never imports fails with ``NameError``, as it would for a student
running ``doctest``), except that every function, class or module of the student package is
replaced by the reference's object of the same qualified name.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

REFERENCE = "reference"


def load_package(directory: Path, name: str) -> ModuleType:
    """Import the package in ``directory`` under ``name`` (another copy of ``student/``, e.g.
    a handout's, without clashing with this repository's ``student``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, directory / "__init__.py", submodule_search_locations=[str(directory)])
    if spec is None or spec.loader is None:
        raise ImportError(f"{directory} is not a Python package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def modules(package: ModuleType) -> list[ModuleType]:
    """The package and each of its direct submodules (``.py`` files), in name order."""
    directory = Path(package.__file__).parent
    names = sorted(p.stem for p in directory.glob("*.py") if p.stem != "__init__")
    return [package] + [importlib.import_module(f"{package.__name__}.{n}") for n in names]


def reference_counterpart(value: object, package: str) -> object:
    """The reference's object for a function, class or module of ``package``; any other
    value unchanged. ``LookupError`` when the reference has no such object."""
    if isinstance(value, ModuleType):
        name = value.__name__
        if name == package or name.startswith(package + "."):
            return importlib.import_module(REFERENCE + name[len(package):])
        return value
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return value
    if module != package and not module.startswith(package + "."):
        return value
    target: object = importlib.import_module(REFERENCE + module[len(package):])
    for part in qualname.split("."):
        if not hasattr(target, part):
            raise LookupError(f"{module}.{qualname} has no counterpart in {REFERENCE}/")
        target = getattr(target, part)
    return target


def reference_globals(module: ModuleType, package: str) -> dict[str, object]:
    """``module``'s globals with the package's objects swapped for the reference's."""
    return {name: reference_counterpart(value, package) for name, value in vars(module).items()}


def docstring_examples(package: ModuleType) -> list[doctest.DocTest]:
    """Every docstring with examples in the package's modules, bound to the reference."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    found: list[doctest.DocTest] = []
    for module in modules(package):
        found += finder.find(module, globs=reference_globals(module, package.__name__))
    return sorted(found, key=lambda t: t.name)


def run_example(test: doctest.DocTest) -> tuple[int, str]:
    """Run one docstring's examples: (number of failed examples, doctest's report)."""
    out = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False)
    result = runner.run(test, out=out.write)
    return result.failed, out.getvalue()
