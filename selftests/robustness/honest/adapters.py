"""The reference behind the honest adapters: the victim of attacks on other gradings."""
from student.base_adapters import *  # noqa: F401,F403
