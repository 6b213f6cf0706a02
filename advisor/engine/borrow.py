"""Views that own nothing, for a kernel's own working arrays.

Numba reference-counts an array, with an atomic add on its owner, wherever it is passed to
a compiled function that is not inlined or a view of it is taken (a row, a slice), and the
pass that pairs these counts away gives up on kernels as large as the engine's: each call
of the slurm mode's node selection counted nine arrays in and out. A view without an owner
(no meminfo, no parent) turns each count into a test of a null pointer: both cores ran
about a tenth faster (docs/performance.md).

The rule that keeps this safe: a kernel takes ``borrowed`` views of its arguments, which
its caller keeps alive, and of the arrays it allocates, after putting those in a tuple
that its ``return`` reads, so that every owner outlives every view; a borrowed view never
leaves the kernel. One view per statement: unpacking a tuple of views made every array an
alias of every other in numba's alias analysis, and the slurm kernel's compilation took
half as long again.
"""
from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


def unowned(context, builder, typ, value):
    """(Code generation) ``value``, an array of type ``typ``, as a view without an owner:
    what ``borrowed`` returns, and what ``kernel_state`` stores and reads."""
    src = context.make_array(typ)(context, builder, value=value)
    view = context.make_array(typ)(context, builder)
    view.meminfo = cgutils.get_null_value(view.meminfo.type)
    view.parent = cgutils.get_null_value(view.parent.type)
    for field in ("nitems", "itemsize", "data", "shape", "strides"):
        setattr(view, field, getattr(src, field))
    return view._getvalue()


@intrinsic
def borrowed(typingctx, array):
    """A view of ``array``'s data that owns nothing."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        return unowned(context, builder, array, args[0])

    return array(array), codegen
