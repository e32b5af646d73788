"""Arrays, groups and their attributes.

>>> from zarrkit.hierarchy import Array, Group
>>> Array.__name__, Group.__name__
('Array', 'Group')
"""

from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.attributes import Attributes
from zarrkit.hierarchy.group import Group

__all__ = ["Array", "Attributes", "Group"]
