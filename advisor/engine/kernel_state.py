"""A compiled kernel's state as one structure its steps share, at the cost of a load per
field: the slurm mode's (``slurm_state``) and the textbook core's (``core_state``).

A kernel builds its arrays and settings as a named tuple that owns them, makes a
``KernelState`` of it (``state_of``: a numba structref whose array fields are views that
own nothing, ``engine.borrow``), and passes its steps a ``StateViewType`` of that
(``view_of``: a plain pointer to the fields, which numba does not reference-count, and
whose arrays it knows to own nothing, so that the counts numba places around every use of
an array compile to nothing). A test makes a ``KernelState`` the same way and calls a step
with it.
"""
from __future__ import annotations

from numba import njit, types
from numba.core import cgutils, imputils
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref
from numba.experimental.jitclass.base import imp_dtor
from numba.extending import (infer_getattr, intrinsic, lower_getattr_generic, models,
                             register_model)

from advisor.engine.borrow import unowned


@structref.register
class KernelStateType(types.StructRef):
    """The numba type of a ``KernelState``: its fields are those of the named tuple it was
    made from."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class KernelState(structref.StructRefProxy):
    """A run's state in compiled code (its fields are read there; Python reads the named
    tuple it was made from)."""


structref.define_boxing(KernelStateType, KernelState)


@intrinsic
def state_of(typingctx, arrays):
    """A ``KernelState`` with the fields of ``arrays`` (a named tuple), its arrays
    borrowed: ``arrays`` must outlive it."""
    if not isinstance(arrays, types.BaseNamedTuple):
        return None
    state_type = KernelStateType(list(zip(arrays.fields, arrays.types)))

    def codegen(context, builder, signature, args):
        # numba's structref.new(), then each field set from the tuple
        payload = context.data_model_manager[state_type.get_data_type()].get_value_type()
        meminfo = context.nrt.meminfo_alloc_dtor(
            builder, context.get_constant(types.uintp, context.get_abi_sizeof(payload)),
            imp_dtor(context, builder.module, state_type))
        pointer = builder.bitcast(context.nrt.meminfo_data(builder, meminfo),
                                  payload.as_pointer())
        builder.store(cgutils.get_null_value(payload), pointer)
        data = cgutils.create_struct_proxy(state_type.get_data_type())(context, builder,
                                                                      ref=pointer)
        for i, (name, typ) in enumerate(zip(arrays.fields, arrays.types)):
            value = builder.extract_value(args[0], i)
            if isinstance(typ, types.Array):
                value = unowned(context, builder, typ, value)
            elif context.enable_nrt:
                context.nrt.incref(builder, typ, value)
            setattr(data, name, value)
        state = context.make_helper(builder, state_type)
        state.meminfo = meminfo
        return state._getvalue()

    return state_type(arrays), codegen


class StateViewType(types.Type):
    """A ``KernelState`` seen through a plain pointer to its fields: what a kernel passes
    to its steps. A structref is reference-counted, atomically, wherever it is passed or
    copied (each inlined step copies its arguments); this view is not, so the kernel keeps
    the state alive and its steps pay for a field with a load."""

    def __init__(self, state_type):
        self.state_type = state_type
        super().__init__(name=f"StateView({state_type.name})")


@register_model(StateViewType)
class _StateViewModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm.lookup(fe_type.state_type.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


@infer_getattr
class _StateViewAttributes(AttributeTemplate):
    key = StateViewType

    def generic_resolve(self, typ, attr):
        return typ.state_type.field_dict.get(attr)


@lower_getattr_generic(StateViewType)
def _state_view_field(context, builder, typ, value, attr):
    data = cgutils.create_struct_proxy(typ.state_type.get_data_type())(context, builder,
                                                                      ref=value)
    field_type = typ.state_type.field_dict[attr]
    value = getattr(data, attr)
    if isinstance(field_type, types.Array):
        # (its owner is known to be none where it is read, so the reference counts that
        # numba places around every use of an array compile to nothing)
        value = unowned(context, builder, field_type, value)
    return imputils.impl_ret_borrowed(context, builder, field_type, value)


@njit(cache=True)
def results(arrays, state):
    """A kernel's (start times, first reservations) from its owned ``arrays``. Taking
    ``state`` keeps it alive until the run ends: the steps read it through ``view_of``."""
    return arrays.start, arrays.first_resv


@intrinsic
def view_of(typingctx, state):
    """The ``StateViewType`` of ``state``, which must outlive it."""
    if not isinstance(state, KernelStateType):
        return None
    view_type = StateViewType(state)

    def codegen(context, builder, signature, args):
        meminfo = context.make_helper(builder, state, value=args[0]).meminfo
        payload = context.data_model_manager[state.get_data_type()].get_value_type()
        return builder.bitcast(context.nrt.meminfo_data(builder, meminfo),
                               payload.as_pointer())

    return view_type(state), codegen
