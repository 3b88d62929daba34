"""Startup hooks and stdlib-shadowing modules in the submission (sitecustomize.py,
usercustomize.py, a .pth file, json.py, random.py, pytest.py, conftest.py; at the top and in
student/): each would forge the results if a trusted process imported it. The worker may import
some of them (only it is hurt); the merge is wrong exactly as control_wrong_merge's."""
import json  # noqa: F401  (the stdlib's or the shadow: the worker does not care)
import random  # noqa: F401

from student.base_adapters import *  # noqa: F401,F403


def run_merge(ids, pair, new_id):
    return []
