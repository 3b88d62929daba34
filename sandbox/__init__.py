"""The sandbox: student code in a confined worker process, and the trusted end that talks to it.

The trusted side: ``sandbox.isolation`` (a pytest session's backends), ``sandbox.backend``
(:class:`~sandbox.backend.WorkerBackend`, one implementation's worker), ``sandbox.spec`` (what
a worker starts from and what its start found out), ``sandbox.process`` (one running worker),
``sandbox.launch`` (its start), ``sandbox.channel`` (both ends of the protocol), ``sandbox.limits``;
``sandbox.worker`` is the worker's side, and the other modules the confinement (namespaces,
user ids, the private root, process trees).
It builds on the student-side ``harness`` and never imports the instructor-side ``grader``;
its modules import one way too (no circle, type-checking imports counted: selftests/test_architecture.py).
"""
