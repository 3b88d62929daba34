"""A pytest plugin for the self-tests: run the collected tests in reverse order
(``-p selftests.reverse_order``), to show an outcome does not depend on what ran before."""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.reverse()
