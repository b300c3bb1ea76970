"""Arrays for every physical layout; see :mod:`quiver.array.base` for the core object."""

from .base import Array, make_array, register_array_class

__all__ = ["Array", "make_array", "register_array_class"]
