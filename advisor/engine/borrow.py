"""Views that own nothing, for a kernel's own working arrays.

Numba reference-counts an array, with an atomic add on its owner, wherever it is passed to
a compiled function that is not inlined or a view of it is taken (a row, a slice), and the
pass that pairs these counts away gives up on kernels as large as the engine's: each call
of the slurm mode's node selection counted nine arrays in and out. A view without an owner
(no meminfo, no parent) turns each count into a test of a null pointer: both cores ran
about a tenth faster (docs/performance.md).

The rule that keeps this safe: a kernel takes ``borrowed`` views of its arguments, which
its caller keeps alive, and of the arrays it allocates, whose owners it keeps in a tuple
that its ``return`` reads, so that every owner outlives every view; a borrowed view never
leaves the kernel.
"""
from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, arrays):
    """``arrays`` (a tuple of arrays) as views of the same data that own nothing."""
    if not isinstance(arrays, types.BaseTuple) or not all(
            isinstance(t, types.Array) for t in arrays.types):
        return None

    def codegen(context, builder, signature, args):
        views = []
        for i, ty in enumerate(arrays.types):
            src = context.make_array(ty)(context, builder,
                                         value=builder.extract_value(args[0], i))
            view = context.make_array(ty)(context, builder)
            view.meminfo = cgutils.get_null_value(view.meminfo.type)
            view.parent = cgutils.get_null_value(view.parent.type)
            for field in ("nitems", "itemsize", "data", "shape", "strides"):
                setattr(view, field, getattr(src, field))
            views.append(view._getvalue())
        return context.make_tuple(builder, arrays, views)

    return arrays(arrays), codegen
