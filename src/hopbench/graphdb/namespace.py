"""Where one hopbench graph lives in a Neo4j database: its own labels, indexes and constraints.

Every graph hopbench exports gets a namespace: 16 hex digits of the SHA-256 of the graph's
content key (`kg.manifest["graph_key"]`). Its nodes carry only the labels
``Hopbench_<ns>_Entity`` and ``Hopbench_<ns>_Passage``, its indexes and constraints are named
``hopbench_<ns>_...``, and one ``(:HopbenchGraph {namespace})`` node registers it. So

* a user's own ``:Entity`` / ``:Passage`` nodes (or anything else) are never matched, changed or
  deleted by hopbench, and hopbench's queries never see them;
* several graphs (datasets, graph settings) live side by side in one database, each with its
  own vector indexes, and runs on different graphs can run at the same time;
* replacing or dropping a graph touches only its namespace.

Label and index names cannot be query parameters, so they are pasted into the Cypher text;
that is safe because the namespace id is checked against ``^[0-9a-f]{12,64}$`` first (it is a
hash, never user text). Neo4j 5.26's dynamic labels (``MATCH (n:$($label))``) were measured
and not used: the planner cannot use an index through them (an all-nodes scan per lookup).
Relationship types stay ``RELATES_TO`` and ``MENTIONS``: they only ever join nodes of one
namespace, and every query starts from namespaced nodes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from hopbench.core.errors import HopbenchError

NAMESPACE_RE = re.compile(r"^[0-9a-f]{12,64}$")
NAMESPACE_LEN = 16
# a label of some hopbench namespace (also found when its registry node is gone)
LABEL_RE = re.compile(r"^Hopbench_([0-9a-f]{12,64})_(Entity|Passage)$")


@dataclass(frozen=True)
class Namespace:
    """The names of one graph's labels, vector indexes and constraints (see the module docstring)."""

    id: str

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not NAMESPACE_RE.fullmatch(self.id):
            raise HopbenchError(
                f"not a hopbench graph namespace: {self.id!r} (12-64 lowercase hex digits)"
            )

    @classmethod
    def for_graph_key(cls, graph_key: str) -> Namespace:
        return cls(hashlib.sha256(str(graph_key).encode()).hexdigest()[:NAMESPACE_LEN])

    @property
    def entity(self) -> str:
        return f"Hopbench_{self.id}_Entity"

    @property
    def passage(self) -> str:
        return f"Hopbench_{self.id}_Passage"

    @property
    def entity_index(self) -> str:
        return f"hopbench_{self.id}_entity_description"

    @property
    def passage_index(self) -> str:
        return f"hopbench_{self.id}_passage_embedding"

    @property
    def constraints(self) -> dict[str, tuple[str, str]]:
        """name -> (label, property) of the uniqueness constraints."""
        return {
            f"hopbench_{self.id}_entity_idx": (self.entity, "idx"),
            f"hopbench_{self.id}_entity_name": (self.entity, "name"),
            f"hopbench_{self.id}_passage_idx": (self.passage, "idx"),
            f"hopbench_{self.id}_passage_id": (self.passage, "id"),
        }

    def cypher(self, text: str) -> str:
        """`text` with {{ENTITY}}, {{PASSAGE}}, {{ENTITY_INDEX}} and {{PASSAGE_INDEX}} filled in."""
        out = (
            text.replace("{{ENTITY}}", self.entity)
            .replace("{{PASSAGE}}", self.passage)
            .replace("{{ENTITY_INDEX}}", self.entity_index)
            .replace("{{PASSAGE_INDEX}}", self.passage_index)
        )
        if "{{" in out:
            raise HopbenchError(
                f"unfilled placeholder in Cypher text: {out[out.index('{{') :][:40]!r}"
            )
        return out
