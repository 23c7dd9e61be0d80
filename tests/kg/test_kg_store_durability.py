"""A saved graph is on the disk before its folder's name says it is complete."""

from __future__ import annotations

import os

from hopbench.kg import load_or_build
from hopbench.kg.store import MANIFEST, load_graph, save_graph


def test_every_file_and_the_folder_are_synced_before_the_rename(
    tmp_path, musique_sub, encoder, cache_dir, monkeypatch
):
    kg = load_or_build(musique_sub, None, encoder=encoder, cache_dir=cache_dir)
    events: list[tuple[str, str]] = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename(src, dst):
        events.append(("rename", str(src)))
        real_rename(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    folder = save_graph(kg, tmp_path / "graphs" / "g")
    monkeypatch.undo()
    renames = [i for i, (k, _) in enumerate(events) if k == "rename"]
    assert len(renames) == 1
    staged = events[renames[0]][1]
    synced_before = {p for k, p in events[: renames[0]] if k == "fsync"}
    files = {str(p).replace(str(folder), staged) for p in folder.rglob("*")}
    assert {MANIFEST, "arrays.npz", "entities.parquet"} <= {p.name for p in folder.iterdir()}
    assert files | {staged} <= synced_before, files - synced_before
    assert ("fsync", str(folder.parent)) in events[renames[0] :]
    assert load_graph(folder).entity_names == kg.entity_names
