"""Reading a run's metrics.json, the file whose presence marks the run complete.

Only a readable one does: an empty or cut-short metrics.json (the name reached the disk, the
bytes did not, as after a power cut before writes were synced) means the run is incomplete, so
a relaunch finishes it again from its rows and `hopbench report` leaves it out with a warning
instead of failing on every run.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def read_metrics(path: Path) -> dict | None:
    """The metrics of a complete run, or None when metrics.json is missing, unreadable, empty or
    not a JSON object (warned: such a run counts as incomplete)."""
    try:
        metrics = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning(
            "%s is unreadable (%s); the run counts as incomplete (a relaunch finishes it "
            "again from its rows)",
            path,
            exc.__class__.__name__,
        )
        return None
    if not isinstance(metrics, dict):
        log.warning("%s is not a JSON object; the run counts as incomplete", path)
        return None
    return metrics
