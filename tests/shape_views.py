"""The Geometry and Distance views of some settings, as the page and the CLI make them:
``build_view``, then ``build_geometry`` / ``build_distance`` with the same tables."""

from __future__ import annotations

from typing import Any

from posviz.config import Settings
from posviz.distance import DistanceView, build_distance
from posviz.geometry import GeometryView, build_geometry
from posviz.view import build_view, seeded_tables


def geometry_of(settings: Settings, **options: Any) -> GeometryView:
    """The Geometry view of ``settings`` (``options``: those of ``build_geometry``)."""
    tables = options.get("tables", seeded_tables)
    return build_geometry(build_view(settings, tables=tables), **options)


def distance_of(settings: Settings, **options: Any) -> DistanceView:
    """The Distance view of ``settings`` (``options``: those of ``build_distance``)."""
    tables = options.get("tables", seeded_tables)
    return build_distance(build_view(settings, tables=tables), **options)
