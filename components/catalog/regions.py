"""Cloud region names per cloud (data/regions.json), and the lookups that catch a typo'd region."""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass

from rapidfuzz.distance import OSA

from . import _data
from .errors import CLOUDS, check_cloud

REGIONS_FILE = "components/catalog/data/regions.json"
"""Where the full region lists live (repository path), for error messages."""


@dataclass(frozen=True)
class Region:
    """One region of a cloud: its API name, the cloud's description and the source of the row."""

    cloud: str
    name: str
    location: str
    source: str
    partition: str | None = None
    """AWS only: `aws` (commercial) or `aws-us-gov` (GovCloud)."""
    restricted: bool = False
    """Azure only: access is granted on request."""
    availability_zones: bool | None = None
    """Azure only: whether the region has availability zones (Microsoft's regions list). None on AWS and GCP, where
    every region has zones."""


@functools.cache
def _regions() -> tuple[Region, ...]:
    return tuple(Region(**row) for row in _data.load("regions")["regions"])


@functools.cache
def _names(cloud: str | None) -> tuple[str, ...]:
    return tuple(r.name for r in _regions() if cloud in (None, r.cloud))


def regions(cloud: str | None = None) -> list[Region]:
    """All regions, or those of one cloud, in data-file order."""
    if cloud is not None:
        check_cloud(cloud)
    return [r for r in _regions() if cloud in (None, r.cloud)]


def region_names(cloud: str | None = None) -> list[str]:
    """Region names of one cloud (or of every cloud), in data-file order."""
    if cloud is not None:
        check_cloud(cloud)
    return list(_names(cloud))


def find_region(cloud: str, name: str) -> Region | None:
    """The row of a region on a cloud, or None when the catalog doesn't list it."""
    check_cloud(cloud)
    return next((r for r in _regions() if r.cloud == cloud and r.name == name), None)


def region_clouds(name: str) -> list[str]:
    """The clouds that have a region of this name (region names are distinct across clouds, so at most one)."""
    return [cloud for cloud in CLOUDS if name in _names(cloud)]


def region_doc(cloud: str) -> str:
    """The cloud's own page with its full region list."""
    check_cloud(cloud)
    return _data.load("regions")["lists"][cloud]["doc"]


def region_example(cloud: str) -> str:
    """A region name of the cloud, for messages ("for example us-east-1")."""
    check_cloud(cloud)
    return _data.load("regions")["lists"][cloud]["example"]


def suggest_regions(name: str, cloud: str | None = None, n: int = 3) -> list[str]:
    """The listed regions closest to `name` (of one cloud, or of all); empty when nothing is close.

    Case is ignored (listed names are lower-case, and Azure itself takes a location in any case), so a name in
    another case suggests that region alone: "EastUS2" -> eastus2. Otherwise difflib's similarity
    (`get_close_matches`, cutoff 0.6) picks the candidates; of those, the ones fewest edits away (optimal string
    alignment: insertions, deletions, substitutions and swaps of neighbouring characters each count one) are kept (at
    most `n`, in difflib's order). So a one-character typo lists the region it was typed from, next to any other
    region equally close ("us-est-1" -> us-west-1, us-east-1), unless more than `n` regions are one edit away
    ("ap-southeast-9" is one edit from each of ap-southeast-1 ... -7).
    """
    names = _names(cloud)
    key = name.strip().lower()
    candidates = difflib.get_close_matches(key, names, n=len(names), cutoff=0.6)
    if not candidates:
        return []
    distances = {candidate: OSA.distance(key, candidate) for candidate in candidates}
    best = min(distances.values())
    return [candidate for candidate in candidates if distances[candidate] == best][:n]
