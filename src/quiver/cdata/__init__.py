"""The Arrow C data and C stream interfaces (CDataInterface.rst, CStreamInterface.rst,
PyCapsuleInterface.rst): one layer, above arrays and batches and below IPC.

- :mod:`quiver.cdata.capsule`: the ctypes structs, PyCapsules, binary metadata, the
  release callbacks and the generic fill of a schema node or an array node.
- :mod:`quiver.cdata.schema`: format strings to types and schema capsules to
  :class:`~quiver.types.Field` / :class:`~quiver.types.Schema`.
- :mod:`quiver.cdata.array`: an Array's buffers as an ``ArrowArray``.
- :mod:`quiver.cdata.import_array`: other libraries' arrays and streams of arrays as
  zero-copy quiver Arrays.
- :mod:`quiver.cdata.stream`: record batches and ``ArrowArrayStream``.
- :mod:`quiver.cdata.import_batch`: other libraries' record batches, tables and batch
  streams (``ArrowStreamReader``, the writers' ``BatchImporter``).

The classes below this layer (``DataType.__arrow_c_schema__``, ``Array.__arrow_c_array__``,
``RecordBatch.__arrow_c_array__``, ``__arrow_c_stream__``, ``RecordBatchReader.from_stream``,
casts to another library's type) call these modules through :mod:`quiver.hooks`: each
module registers its hooks when imported, and the first call imports it, so ``import
quiver`` does not load ctypes.  :mod:`quiver.interop` re-exports the functions under their
interop names; accepting foreign objects in the public factories is
:mod:`quiver.constructors`.
"""
