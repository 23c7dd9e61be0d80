"""Export the response cache entries runs used into a reply file; import a reply file into a cache.

Why: so that the LLM rows of the reference can be regenerated anywhere from cache hits
(`hopbench.llm.reply_file` says what the file holds). Export refuses to write a file that
would not reproduce its runs (a key a run used that the cache does not hold) unless told to;
import never overwrites a different stored reply unless told to, since that would change rows
already computed from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.llm.cache import CachedResponse, ResponseCache
from hopbench.llm.reply_digests import read_verified
from hopbench.llm.reply_file import FORMAT, UNLABELLED, VERSION, Reply, write_reply_file
from hopbench.llm.reply_keys import RunKeys

SHOWN = 5  # keys named per run in an error; the rest are counted


class MissingReplies(HopbenchError):
    """Keys runs used that the cache does not hold (or rows that recorded no keys)."""


@dataclass
class Export:
    header: dict
    missing: dict[str, list[str]] = field(
        default_factory=dict
    )  # run label -> keys not in the cache
    unrecorded: dict[str, int] = field(default_factory=dict)  # run label -> rows without keys


@dataclass
class Import:
    added: int = 0
    same: int = 0  # already stored with the same reply text: skipped
    replaced: int = 0  # conflicts overwritten (--force)
    conflicts: list[tuple[Reply, str]] = field(default_factory=list)  # (file's, stored text)


def _gaps(missing: dict[str, list[str]], unrecorded: dict[str, int]) -> str:
    lines = []
    for label, keys in missing.items():
        more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
        lines.append(
            f"  {label}: {len(keys)} key(s) not in the cache: {', '.join(keys[:SHOWN])}{more}"
        )
    for label, n in unrecorded.items():
        lines.append(
            f"  {label}: {n} row(s) made LLM calls but record no keys (written before "
            "runs recorded them; rerun with force=true, which answers from the cache)"
        )
    return "\n".join(lines)


class ConflictingReplies(HopbenchError):
    """`--update`: the file holds a different reply for a key than the cache."""


def export_replies(
    runs: list[RunKeys],
    cache: ResponseCache,
    out: str | Path,
    *,
    allow_missing: bool = False,
    update: bool = False,
) -> Export:
    """Write the entries `runs` used to `out`, with the failed replies the cache recorded for
    them (flagged). A key in neither (a failure met before failures were recorded; another
    machine's cache) raises `MissingReplies` naming the run and key, and nothing is written,
    unless `allow_missing` (then it is counted in the result). A run the file cannot bring
    back alone (such gaps, or a run not finished: its replies so far are kept, so an interrupted
    row is not lost with its machine) is listed under `incomplete_runs`, not `runs`. With
    `update`, the entries and runs already in `out` are kept beside them: run folders are
    disposable, the file is not."""
    kept, kept_runs, unlabelled = _kept(out) if update else ({}, ({}, {}), set())
    found: dict[str, Reply] = {}
    missing: dict[str, list[str]] = {}
    for run in runs:
        for key in run.keys:
            if key in found:
                continue
            hit = cache.get(key)
            model = cache.model_identity(key) if hit is not None else None
            if hit is not None and model is not None:
                found[key] = Reply(
                    key, model, hit.text, hit.prompt_tokens, hit.completion_tokens, hit.latency_s
                )
            elif (failed := cache.get_failed(key)) is not None:
                model, bad = failed
                found[key] = Reply(
                    key,
                    model,
                    bad.text,
                    bad.prompt_tokens,
                    bad.completion_tokens,
                    bad.latency_s,
                    failed=True,
                    truncated=bad.truncated,
                )
            else:
                missing.setdefault(run.label, []).append(key)
    unrecorded = {r.label: r.unrecorded_rows for r in runs if r.unrecorded_rows}
    if (missing or unrecorded) and not allow_missing:
        raise MissingReplies(
            f"the cache {cache.path} cannot reproduce these runs (--allow-missing "
            f"writes the file anyway):\n{_gaps(missing, unrecorded)}"
        )
    for key, old in kept.items():
        new = found.setdefault(key, old)
        if (new.text, new.failed) != (old.text, old.failed):
            raise ConflictingReplies(
                f"{out}: key {key} has another reply in the file than in the cache "
                f"{cache.path}; nothing written (export without --update replaces the file)"
            )
    complete, incomplete = kept_runs
    users = _users(found, kept, runs)
    for r in runs:  # this export's word on a run replaces the file's
        complete.pop(r.label, None)
        incomplete.pop(r.label, None)
        held = len(r.keys) - len(missing.get(r.label, ()))
        if r.complete and r.label not in missing and r.label not in unrecorded:
            complete[r.label] = held
        else:  # keys the cache lacks, rows without keys, or questions not yet asked
            incomplete[r.label] = held
    entries = [replace(r, runs=tuple(sorted(users.get(k, ())))) for k, r in found.items()]
    unlabelled -= {r.label for r in runs}
    head = write_reply_file(out, entries, complete, incomplete, unlabelled)
    return Export(head, missing, unrecorded)


def _users(
    found: dict[str, Reply], kept: dict[str, Reply], runs: list[RunKeys]
) -> dict[str, set[str]]:
    """key -> the labels of the runs that used it: this export's runs from their rows, the kept
    runs (`--update`) as the file said (a version 1 or 2 file does not say: those runs are
    written as `unlabelled_runs`)."""
    now = {r.label for r in runs}
    users: dict[str, set[str]] = {k: set(r.runs) - now for k, r in kept.items()}
    for r in runs:
        for key in r.keys:
            if key in found:
                users.setdefault(key, set()).add(r.label)
    return users


def _kept(
    out: str | Path,
) -> tuple[dict[str, Reply], tuple[dict[str, int], dict[str, int]], set[str]]:
    """The entries, complete runs, incomplete runs and unlabelled runs (whose entries do not
    name them: every run of a version 1 or 2 file) of an existing reply file (none if there is
    no file yet)."""
    if not Path(out).exists():
        return {}, ({}, {}), set()
    head, replies = read_verified(out)
    complete, incomplete = dict(head["runs"]), dict(head.get("incomplete_runs", {}))
    unlabelled = (
        set(head.get(UNLABELLED, [])) if head["version"] >= 3 else set(complete) | set(incomplete)
    )
    return {r.key: r for r in replies}, (complete, incomplete), unlabelled


def import_replies(path: str | Path, cache: ResponseCache, *, force: bool = False) -> Import:
    """Load a reply file into `cache`. An entry already stored with the same text is skipped; one
    stored with a different text is a conflict, kept as stored unless `force`. The whole file is
    read and checked (every line, and against its digest list) before anything is written."""
    _, replies = read_verified(path)
    result = Import()
    request = {"imported": f"{FORMAT} v{VERSION}"}  # the prompts are not in the file
    for r in replies:
        if r.failed:
            _import_failed(r, cache, result, force)
            continue
        stored = cache.get(r.key)
        if not _admit(r, None if stored is None else stored.text, result, force):
            continue
        cache.put(
            r.key,
            r.model,
            request,
            CachedResponse(r.text, r.prompt_tokens, r.completion_tokens, r.seconds),
            replace=stored is not None,
        )
    return result


def _import_failed(r: Reply, cache: ResponseCache, result: Import, force: bool) -> None:
    """A failed reply goes to the cache's failed record (read only with `llm.replay_failed`)."""
    stored = cache.get_failed(r.key)
    if not _admit(r, None if stored is None else stored[1].text, result, force):
        return
    cache.put_failed(
        r.key,
        r.model,
        CachedResponse(
            r.text, r.prompt_tokens, r.completion_tokens, r.seconds, truncated=r.truncated
        ),
    )


def _admit(r: Reply, stored: str | None, result: Import, force: bool) -> bool:
    """Whether the file's reply is written, counted in `result`: yes when nothing is stored, no
    when the same text is, and for a different text (a conflict) only with `force`."""
    if stored == r.text:
        result.same += 1
        return False
    if stored is not None:
        result.conflicts.append((r, stored))
        if not force:
            return False
        result.replaced += 1
    else:
        result.added += 1
    return True
