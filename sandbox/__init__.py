"""The sandbox: student code in a confined worker process, and the trusted end that talks to it.

``sandbox.isolation`` is the trusted side (:class:`~sandbox.isolation.WorkerBackend`, one
implementation's worker), ``sandbox.worker`` the worker's side of the protocol, and the
other modules the confinement (namespaces, user ids, the private root, process trees).
It builds on the student-side ``harness`` and never imports the instructor-side ``grader``.
"""
