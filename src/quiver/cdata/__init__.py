"""The Arrow C data and C stream interfaces (CDataInterface.rst, CStreamInterface.rst,
PyCapsuleInterface.rst), split by the layer that needs each part.

- :mod:`quiver.cdata.capsule` (bottom, beside :mod:`quiver.errors`): the ctypes structs,
  PyCapsules, binary metadata, the release callbacks and the generic fill of a schema node
  or an array node.  It knows nothing of DataType or Array.
- :mod:`quiver.cdata.schema` (types layer): format strings to types and schema capsules to
  :class:`~quiver.types.Field` / :class:`~quiver.types.Schema` (the export side lives on the
  type classes: :meth:`quiver.types.DataType.__arrow_c_schema__`).
- :mod:`quiver.cdata.array` (array layer): an Array's buffers as an ``ArrowArray``.
- :mod:`quiver.cdata.import_array` (array layer): other libraries' arrays and streams of
  arrays as zero-copy quiver Arrays.
- :mod:`quiver.cdata.stream` (batch layer): record batches and ``ArrowArrayStream``.
- :mod:`quiver.cdata.import_batch` (batch layer): other libraries' record batches, tables
  and batch streams (``ArrowStreamReader``, the writers' ``BatchImporter``).

Each is imported only when a ``__arrow_c_*__`` method runs or a foreign object arrives, so
``import quiver`` does not load ctypes.  :mod:`quiver.interop` re-exports the import
functions under their interop names; accepting foreign objects in the public factories is
:mod:`quiver.constructors`.
"""
