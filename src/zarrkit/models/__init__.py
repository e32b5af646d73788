"""Zarr Object Models (ZEP 6): a hierarchy's structure as immutable, validated specs.

``zarrkit.models.v2`` and ``zarrkit.models.v3`` each hold an ``ArraySpec`` and a
``GroupSpec``: the JSON documents of ZEP 6, read from and written to stores, compared
(``diff``, ``like``), described by JSON Schema (``json_schema()``) and checked against
live hierarchies (``validate``).

>>> import numpy as np
>>> from zarrkit.models.v3 import ArraySpec, GroupSpec
>>> spec = GroupSpec(members={"x": ArraySpec.from_array(np.zeros(4, dtype="u1"))})
>>> GroupSpec.from_store(spec.to_store({})).like(spec)
True
"""

from __future__ import annotations

from zarrkit.models import v2, v3
from zarrkit.models._common import Difference
from zarrkit.models.convert import to_v2, to_v3
from zarrkit.models.validation import Violation, validate

__all__ = ["Difference", "Violation", "to_v2", "to_v3", "v2", "v3", "validate"]
