"""Placeholder modules for what an authors' package imports at module level but never calls
offline (vllm, gritlm, litellm in hipporag 2.0.0a4): worker-side, standard library only.

Any attribute of a placeholder is another placeholder; calling one raises, so a code path that
really needs the module fails loudly instead of doing something else.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types


class Placeholder(types.ModuleType):
    """A module whose every attribute is another placeholder; calling one raises."""

    purpose = "the offline comparison"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sub = type(self)(f"{self.__name__}.{name}")
        setattr(self, name, sub)
        return sub

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.__name__} was called: {self.purpose} must not use it")


class PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers every import under `roots` with a placeholder package."""

    def __init__(self, roots: tuple[str, ...], purpose: str):
        self.roots = roots
        self.module_type = type("Placeholder", (Placeholder,), {"purpose": purpose})

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = self.module_type(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def install_placeholders(
    roots: tuple[str, ...] = ("vllm", "gritlm", "litellm"),
    purpose: str = "the offline comparison",
) -> None:
    """From now on, importing any of `roots` gives a placeholder (first on sys.meta_path)."""
    sys.meta_path.insert(0, PlaceholderFinder(roots, purpose))
