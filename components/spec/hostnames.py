"""Host names the platform gives the clouds (a global endpoint's public `domain`): bare, fully qualified DNS names."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# A DNS host name (RFC 1035 section 2.3.1 as relaxed by RFC 1123 section 2.1): labels of 1 to 63 letters, digits and
# hyphens, not starting or ending with a hyphen, at most 253 characters in all; the last label is not all-numeric
# (RFC 3696 section 2), which also keeps IP addresses out.
_DNS_LABEL = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?$")
MAX_HOST_NAME = 253
HOST_NAME_RULE = ("a bare fully qualified host name such as infer.example.com: at least two labels of 1 to 63 letters, "
                  f"digits and '-' (not starting or ending with '-'), at most {MAX_HOST_NAME} characters, no scheme, path, "
                  "port, wildcard or trailing '.'")


def host_name_problem(domain: str) -> str | None:
    """What keeps `domain` from being a bare fully qualified host name (`HOST_NAME_RULE`), or None."""
    if not domain:
        return "it is empty"
    if "://" in domain:
        return "it is a URL"
    for char, what in (("/", "a path"), (":", "a port"), ("*", "a wildcard"), ("@", "user information")):
        if char in domain:
            return f"it has {what}"
    if domain.endswith("."):
        return "it ends in '.'"
    if len(domain) > MAX_HOST_NAME:
        return f"it has {len(domain)} characters"
    labels = domain.split(".")
    if len(labels) < 2:
        return "it is a single label"
    bad = next((label for label in labels if not _DNS_LABEL.match(label)), None)
    if bad is not None:
        return f"label '{bad}' is not 1 to 63 letters, digits and '-' starting and ending with a letter or digit"
    if labels[-1].isdigit():
        return "its last label is all digits"
    return None


def bare_host(domain: str) -> str | None:
    """The host name inside a URL-like `domain` (`https://Infer.Example.com/api` -> infer.example.com), if valid."""
    try:
        host = urlsplit(domain if "://" in domain else f"//{domain}").hostname
    except ValueError:
        return None
    host = host.rstrip(".") if host else None
    return host if host and host != domain and host_name_problem(host) is None else None
