"""`hopbench replies export|import`: carry the LLM replies behind runs to another machine's cache.

    hopbench replies export --runs-dir runs --reference results/reference/leaderboard.csv \\
        --out results/reference/llm_replies.jsonl.gz
    hopbench replies import results/reference/llm_replies.jsonl.gz     # before the runs

Export writes the response cache entries (request key -> reply text, model, tokens and
seconds when first made) that the named runs' rows used, as recorded in their `llm_keys`;
without RUN_DIRs, every complete run under --runs-dir; with --update, beside what the file
already holds (the replies of runs whose folders are gone stay). Import loads such a file into the
cache, so those runs recompute every LLM reply as a cache hit: no model, no server. Replies
that failed their check are carried too, flagged; runs replay them with llm.replay_failed=true
(`hopbench paper` sets it), so a row that met a bad reply comes back identical.
Export writes the file's digest list beside it (`llm_replies.jsonl.gz` -> `llm_replies.sha256`);
import reads and checks the whole file, and checks it against that list, before it writes
anything. Exit code 2 for a key the cache lacks (export), a conflicting stored reply (import), a
file that is not a reply file (or exceeds its bounds), or one that does not match its list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import cache_dir_default, runs_dir_default
from hopbench.llm.cache import ResponseCache
from hopbench.llm.replies import SHOWN, export_replies, import_replies
from hopbench.llm.reply_digests import digests_path
from hopbench.llm.reply_keys import complete_runs, reference_hashes, run_keys

_EPILOG = __doc__.split("\n\n", 1)[1]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hopbench replies",
        description=__doc__.splitlines()[0],
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{export,import}")
    ex = sub.add_parser(
        "export",
        help="write the cache entries runs used into a reply file",
        description="Write the response cache entries the runs' rows used (their "
        "llm_keys) into a gzip JSON-lines reply file, sorted by key.",
    )
    ex.add_argument(
        "run_dirs",
        nargs="*",
        metavar="RUN_DIR",
        help="run folders (or paths under --runs-dir); default: every complete run there",
    )
    ex.add_argument(
        "--runs-dir",
        default=runs_dir_default(),
        help="where runs live (default: $HOPBENCH_RUNS_DIR, else runs)",
    )
    ex.add_argument(
        "--reference",
        metavar="LEADERBOARD_CSV",
        help="only the runs whose config hash is a row of this leaderboard "
        "(e.g. results/reference/leaderboard.csv)",
    )
    ex.add_argument(
        "--out", required=True, metavar="FILE", help="the reply file to write (.jsonl.gz)"
    )
    ex.add_argument(
        "--cache-dir",
        default=cache_dir_default(),
        help="the caches' folder, as paths.cache_dir (default: $HOPBENCH_CACHE_DIR, "
        "else ~/.cache/hopbench); the replies are in llm/responses.sqlite",
    )
    ex.add_argument(
        "--allow-missing",
        action="store_true",
        help="write the file even if the cache lacks keys the runs used (counted)",
    )
    ex.add_argument(
        "--update",
        action="store_true",
        help="keep the entries and runs already in --out and add these runs' (for runs whose "
        "folders are gone); a key with another reply than the cache's is an error",
    )
    im = sub.add_parser(
        "import",
        help="load a reply file into the response cache",
        description="Load a reply file into the response cache. Entries stored "
        "with the same reply are skipped; a different stored reply is "
        "a conflict, kept unless --force (exit code 2).",
    )
    im.add_argument(
        "file", metavar="FILE", help="a reply file written by `hopbench replies export`"
    )
    im.add_argument(
        "--cache-dir",
        default=cache_dir_default(),
        help="the caches' folder, as paths.cache_dir (default: $HOPBENCH_CACHE_DIR, "
        "else ~/.cache/hopbench)",
    )
    im.add_argument("--force", action="store_true", help="overwrite stored replies that differ")
    return parser


def _run_dirs(args) -> list[Path]:
    if not args.run_dirs:
        if not Path(args.runs_dir).is_dir():
            raise HopbenchError(f"{args.runs_dir}: no such runs folder (--runs-dir)")
        dirs = complete_runs(args.runs_dir)
    else:
        dirs = []
        for d in args.run_dirs:
            p = Path(d) if Path(d).is_dir() else Path(args.runs_dir) / d
            if not p.is_dir():
                raise HopbenchError(f"{d}: no such run folder (nor under {args.runs_dir})")
            dirs.append(p)
    if args.reference:
        wanted = reference_hashes(args.reference)
        dirs = [d for d in dirs if d.name in wanted]
    return dirs


def _export(args) -> int:
    runs = [r for r in map(run_keys, _run_dirs(args)) if r.keys or r.unrecorded_rows]
    for r in runs:
        if not r.complete:
            print(
                f"hopbench replies: note: {r.label} is not complete; its remaining questions' "
                "replies are not in the file, which lists it apart (incomplete_runs) until an "
                "export after it finishes",
                file=sys.stderr,
            )
    cache = ResponseCache.in_dir(args.cache_dir)
    try:
        result = export_replies(
            runs, cache, args.out, allow_missing=args.allow_missing, update=args.update
        )
    finally:
        cache.close()
    head = result.header
    size = Path(args.out).stat().st_size
    models = ", ".join(f"{m} ({n})" for m, n in head["models"].items()) or "none"
    print(
        f"wrote {args.out} and its digest list {digests_path(args.out)}: {head['n_entries']} "
        f"replies used by {len(head['runs'])} run(s) "
        f"({head['n_failed']} of them failed their check: replayed with llm.replay_failed=true), "
        f"{size:,} bytes; models: {models}"
    )
    n_missing = sum(map(len, result.missing.values()))
    if n_missing or result.unrecorded:
        print(
            f"hopbench replies: {n_missing} key(s) not in the cache and "
            f"{sum(result.unrecorded.values())} row(s) without keys were left out "
            "(--allow-missing); the file lists their runs apart (incomplete_runs): it cannot "
            "bring them back alone",
            file=sys.stderr,
        )
    return 0


def _import(args) -> int:
    cache = ResponseCache.in_dir(args.cache_dir)
    try:
        result = import_replies(args.file, cache, force=args.force)
    finally:
        cache.close()
    total = result.added + result.same + len(result.conflicts)
    print(
        f"{args.file}: {total} replies into {cache.path}: {result.added} added, {result.same} "
        f"already there, {len(result.conflicts)} conflict(s)"
        + (f" ({result.replaced} overwritten: --force)" if result.replaced else "")
    )
    for reply, stored in result.conflicts[:SHOWN]:
        print(
            f"  conflict {reply.key}: the file has {reply.text[:60]!r}, the cache {stored[:60]!r}",
            file=sys.stderr,
        )
    if len(result.conflicts) > SHOWN:
        print(f"  and {len(result.conflicts) - SHOWN} more conflict(s)", file=sys.stderr)
    if result.conflicts and not args.force:
        print(
            "hopbench replies import: conflicting replies were kept as the cache has them "
            "(--force overwrites them with the file's)",
            file=sys.stderr,
        )
        return 2
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        return _export(args) if args.command == "export" else _import(args)
    except HopbenchError as exc:
        print(f"hopbench replies {args.command}: error: {exc}", file=sys.stderr)
        return 2
