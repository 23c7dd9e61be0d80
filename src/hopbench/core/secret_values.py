"""Secrets (passwords, keys, tokens) stay in the environment: never in a file hopbench or Hydra writes.

Three ways a secret could reach the disk, and what happens to each:

- a config key named like a secret (`graphdb.password`, `*_api_key`, `*_token` ...) is shown
  as `<redacted>` in the run's config.yaml (`hopbench.harness.run_config.redacted`);
- the same key given on the command line (`graphdb.password=X`) would be copied by Hydra into
  `.hydra/overrides.yaml`, `hydra.yaml`, `config.yaml` and a sweep's `multirun.yaml`, so
  `move_secret_overrides` moves its value into an environment variable of this process
  (`HOPBENCH_SECRET_GRAPHDB_PASSWORD`, inherited by local and joblib workers) before Hydra
  reads the command line, and Hydra sees `graphdb.password=${oc.env:HOPBENCH_SECRET_...}`;
- credentials inside a URL (`http://user:token@host/v1`) would land in config.yaml, the LLM
  response cache keys and the run hash (and, given on the command line, in Hydra's records):
  it is moved into the environment like a secret override, `url_credentials_error` then
  refuses it (put the token in the environment variable named by `llm.api_key_env`, or
  `embedding.api_key_env`), and `redact_url` hides credentials wherever a URL is shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from urllib.parse import urlsplit, urlunsplit

REDACTED = "<redacted>"
SECRET_KEY = re.compile(r"(^|_)(password|passwd|secret|api_key|token)$", re.IGNORECASE)
_OVERRIDE = re.compile(r"^(\+{0,2})([A-Za-z_][\w.]*)=(.*)$", re.DOTALL)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@")


def is_secret_key(key: str) -> bool:
    """A config key (its last dotted part) that holds a secret."""
    return bool(SECRET_KEY.search(str(key).rsplit(".", 1)[-1]))


def has_url_credentials(value) -> bool:
    return isinstance(value, str) and bool(_URL.match(value))


def redact_url(url: str) -> str:
    """The URL with its userinfo (user:token@) replaced by <redacted>."""
    if not has_url_credentials(url):
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


def url_credentials_error(key: str, url) -> str | None:
    """One line refusing a URL that carries credentials, or None when it carries none."""
    if not has_url_credentials(url):
        return None
    group = key.rsplit(".", 1)[0] if "." in key else "llm"  # llm.base_url -> llm.api_key_env
    return (
        f"{key}={redact_url(url)} holds credentials (user:token@host), which would be recorded in "
        "the run's config, its hash and the response cache: remove them and put the token in an "
        f"environment variable named by {group}.api_key_env (sent as a Bearer token)"
    )


def secret_env_name(key: str) -> str:
    return "HOPBENCH_SECRET_" + re.sub(r"\W", "_", key).upper()


def move_secret_overrides(
    argv: list[str], environ: MutableMapping[str, str] = os.environ
) -> list[str]:
    """argv with every `key=value` override of a secret-named key, or whose value is a URL with
    credentials, turned into `key=${oc.env:HOPBENCH_SECRET_KEY}`, the value put in that
    environment variable (a URL with credentials is then refused, without being written)."""
    out = []
    for arg in argv:
        m = _OVERRIDE.match(arg)
        if m is None:
            out.append(arg)
            continue
        prefix, key, value = m.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if (
            not (is_secret_key(key) or has_url_credentials(value))
            or value in ("", "null")
            or value.startswith("${")
        ):
            out.append(arg)  # no secret in it
            continue
        name = secret_env_name(key)
        environ[name] = value
        out.append(f"{prefix}{key}=${{oc.env:{name}}}")
    return out
