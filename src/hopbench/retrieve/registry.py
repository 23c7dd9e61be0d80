"""Retriever settings have one source: the keyword-only arguments of the constructor.

A retriever's hyper-parameters are its constructor's keyword-only arguments, with their
defaults (`settings`). `register_configs` stores those of every `Configurable` class in the
`hopbench.retrieve` modules as a Hydra structured config ``retriever/schema/<ClassName>``,
and a retriever config starts from it, holding only what differs:

    defaults:
      - schema/HippoRAGRetriever@_here_
      - _self_
    name: hipporag
    _target_: hopbench.retrieve.hipporag.hipporag.HippoRAGRetriever
    llm_name: ${llm.name}

so the composed ``retriever`` config, which the run hash covers, still names every setting
with its value, and changing a default in Python changes the hash of the runs it affects.
The schemas are plain mappings (no type coercion): a value is hashed as given.

A constructor that takes ``**kwargs`` passes them on to the next constructor in the class's
MRO (``super().__init__(**kwargs)``), so the settings of that class are its settings too,
except the ones it names in ``pinned`` (it passes those itself: CatRAG always seeds as
HippoRAG 2). A class that holds a component instead (QAFD's optional HippoRAG seeding) keeps
A component a retriever holds (HippoRAG 2's seeding, held by hipporag, catrag, flow_diffusion_code
and flow_diffusion_joint) is a setting whose default is `nested(ComponentClass)`: the schema
gives it the component's settings as one nested node (``retriever.seeding.linking_top_k``),
and the retriever builds the object from that node with `build_nested`. That is the one way a
retriever reuses another's component (issue #58).

Every composer of the run config imports `hopbench.harness.config_resolvers`, which calls
`register_configs` once.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field

SCHEMA_GROUP = "retriever/schema"


class Configurable:
    """A class whose keyword-only constructor arguments are settings of a retriever config
    (retrievers and the components they share, such as `hipporag.HippoRAGSeeding`)."""

    pinned: dict = {}  # settings of the next constructor in the MRO that this class passes itself
    # Settings the schema leaves out: they enter a config, and its run hash, only where a YAML
    # sets them, so adding one did not change the hash of any run made before it.
    unlisted: tuple = ()


@dataclass(frozen=True)
class Nested:
    """The default of a setting that is a held component's config node: its class's settings,
    less `pinned` (values the host passes itself)."""

    cls: type
    pinned: dict = field(default_factory=dict)

    def defaults(self) -> dict:
        return {k: v for k, v in settings(self.cls).items() if k not in self.pinned}


def nested(cls: type, **pinned) -> Nested:
    """A setting's default that makes it a nested node of `cls`'s settings (see module docstring)."""
    return Nested(cls, dict(pinned))


def build_nested(node, spec: Nested, where: str, **given):
    """The component `spec` describes, from its config node (a mapping, or the `Nested` default
    itself when the host is built in Python): every setting the node leaves out has its default,
    a key the component does not have is refused naming ``retriever.<where>.<key>``; `given` and
    the pinned values are passed as they are (they are the host's, not settings)."""
    from hopbench.core.errors import HopbenchError

    values = dict(spec.defaults())
    if not isinstance(node, Nested):
        if not isinstance(node, Mapping):
            raise HopbenchError(f"retriever.{where} must be a mapping of settings, got {node!r}")
        unknown = sorted(set(node) - set(values))
        if unknown:
            raise HopbenchError(
                f"retriever.{where}.{unknown[0]} is not a setting of {spec.cls.__name__} "
                f"(its settings: {', '.join(sorted(values))})"
            )
        values.update(node)
    return spec.cls(**values, **spec.pinned, **given)


def settings(cls: type) -> dict:
    """{name: default} of cls's keyword-only constructor arguments, and of the next
    constructor's when cls passes ``**kwargs`` on (minus ``cls.pinned``)."""
    init = cls.__dict__.get("__init__")
    if init is None:  # inherits its constructor
        base = _next_init_class(cls)
        return {} if base is None else settings(base)
    out: dict = {}
    forwards = False
    for p in inspect.signature(init).parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            if p.name in getattr(cls, "unlisted", ()):
                continue
            if p.default is inspect.Parameter.empty:
                raise TypeError(f"{cls.__qualname__}: setting {p.name!r} has no default")
            out[p.name] = p.default.defaults() if isinstance(p.default, Nested) else p.default
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            forwards = True
    if forwards and (base := _next_init_class(cls)) is not None:
        pinned = getattr(cls, "pinned", {})
        out.update({k: v for k, v in settings(base).items() if k not in out and k not in pinned})
    return out


def _next_init_class(cls: type) -> type | None:
    """The next class in cls's MRO that defines a constructor of its own (not object's)."""
    for base in cls.__mro__[1:]:
        if base is object:
            return None
        if "__init__" in base.__dict__:
            return base
    return None


def configurable_classes(package: str = "hopbench.retrieve") -> list[type]:
    """Every `Configurable` class defined in the package's modules and its subpackages'
    (retrieve/baselines holds retrievers too)."""
    pkg = importlib.import_module(package)
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, Configurable)
                and obj is not Configurable
                and obj.__module__ == module.__name__
            ):
                found[obj.__name__] = obj
    return [found[k] for k in sorted(found)]


def registry_name(cls: type) -> str:
    """The name a retriever class is registered under (``retriever/schema/<name>``): what a run
    hash records of its class, so moving the class to another module changes no hash. A class
    that is not registered (a user's own, outside hopbench.retrieve) is named by its import path."""
    registered = {c.__name__: c for c in configurable_classes()}
    if registered.get(cls.__name__) is cls:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def register_configs() -> None:
    """Store ``retriever/schema/<ClassName>`` (the class's `settings`) for every class."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    for cls in configurable_classes():
        cs.store(group=SCHEMA_GROUP, name=cls.__name__, node=dict(settings(cls)))
