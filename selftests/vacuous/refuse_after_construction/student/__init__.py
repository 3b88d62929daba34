"""Nothing here: adapters.py implements everything itself (badly, on purpose)."""
