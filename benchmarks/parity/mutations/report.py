"""The mutation table (results/mutations.md) from the run's JSON."""

from __future__ import annotations

from collections import Counter


def cell(text: str) -> str:
    return text.replace("|", "\\|")


TIMEOUT = "(timeout)"  # scratch.run_tests' failing-test entry when the run was stopped


def status(r: dict) -> str:
    """A stopped (timed-out) test run proves nothing: it is neither caught nor a pass."""
    if r.get("baseline_failed"):
        return "not run (baseline failed)"
    if r["failed"] == [TIMEOUT]:
        return "timed out (inconclusive)"
    if r["caught"]:
        return "caught"
    return "equivalent" if r.get("equivalent") else "NOT CAUGHT"


def markdown(res: dict) -> str:
    rows = res["results"]
    counts = Counter(status(r) for r in rows)
    out = [
        "# Parity mutation suite (issue #55)",
        "",
        f"Command: `{res['command']}`  ",
        f"Source: {res['source']}; {res['when']}; total {res['seconds']:.0f} s; "
        f"load average at start {res['load']}.",
        "",
        f"{len(rows)} of {res['listed']} listed mutations ran: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + ".",
        "",
    ]
    by_table = sum(1 for r in rows if r.get("caught_by_stage") == "defaults table")
    if by_table:
        out += [
            f"{by_table} caught by the defaults table alone (`--table-first`: the method's rows"
            " of tests/retrieve/test_authors_defaults.py ran first, the rest of the selection"
            " only where they passed).",
            "",
        ]
    if res.get("note"):
        out += [res["note"], ""]
    out += ["## Baselines (each method's tests on the unmutated copy)", ""]
    out += ["| method | passed | seconds | failing |", "|---|---|---|---|"]
    for m, b in res["baselines"].items():
        out.append(f"| {m} | {b['passed']} | {b['seconds']} | {', '.join(b['failed'])} |")
    out += ["", "## Mutations", ""]
    out += ["| mutation | method | kind | status | caught by | seconds | change |"]
    out += ["|---|---|---|---|---|---|---|"]
    for r in rows:
        by = ", ".join(f"`{t}`" for t in r["failed"][:2]) or "—"
        if r.get("caught_by_stage") == "defaults table":
            by = f"table first: {by}"
        out.append(
            f"| {r['name']}{' (audit)' if r['audit'] else ''} | {r['method']} | {r['kind']} | "
            f"{status(r)} | {by} | {r['seconds']} | {cell(r['edit'])} |"
        )
    notes = [r for r in rows if not r["caught"] and not r.get("baseline_failed")]
    if notes:
        out += ["", "## Not caught: why, and what would catch it", ""]
        out += [
            f"- **{r['name']}**: {r.get('equivalent') or r.get('catch_with') or r['why']}"
            for r in notes
        ]
    return "\n".join(out) + "\n"
