"""Fetch the full HippoRAG-format benchmark files from the Hugging Face hub (needs network).

The downloaded files go through exactly the same parsers as local files.
"""

from __future__ import annotations

from pathlib import Path

from hopbench.core.errors import HopbenchError

DEFAULT_REPO = "osunlp/HippoRAG_2"


def fetch_hipporag_files(
    name: str,
    repo_id: str = DEFAULT_REPO,
    revision: str | None = None,
    cache_dir: str | None = None,
    downloader=None,
) -> tuple[Path, Path]:
    """Return local paths of `{name}.json` and `{name}_corpus.json` from a hub dataset repo."""
    if downloader is None:
        from huggingface_hub import hf_hub_download as downloader
    paths = []
    for filename in (f"{name}.json", f"{name}_corpus.json"):
        try:
            paths.append(
                Path(
                    downloader(
                        repo_id=repo_id,
                        filename=filename,
                        repo_type="dataset",
                        revision=revision,
                        cache_dir=cache_dir,
                    )
                )
            )
        except Exception as exc:  # network, auth or missing file: say which
            raise HopbenchError(
                f"could not fetch {filename} from hub dataset {repo_id}: {exc}"
            ) from exc
    return paths[0], paths[1]
