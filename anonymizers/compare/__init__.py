"""The method chooser, ``anonymizers compare``: every method on one window at one k, each a
verified release, their headline utility against their measured risk in one report."""

__all__: list[str] = []
