"""numba intrinsics shared by the kernel modules: unaligned 8-byte loads and stores, and a
count of trailing zero bits.

Imported only by kernel modules (numba installed), themselves loaded through
:func:`contam_cli.io.accel.load`.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["load8", "store8", "trailing_zeros"]


@intrinsic
def load8(typingctx, arr, idx):  # noqa: ANN001, ANN202, ARG001
    """The 8 bytes ``arr[idx:idx + 8]`` as one little-endian uint64 (an unaligned load)."""
    sig = types.uint64(arr, idx)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return sig, codegen


@intrinsic
def store8(typingctx, arr, idx, value):  # noqa: ANN001, ANN202, ARG001
    """Write uint64 `value` as the 8 bytes ``arr[idx:idx + 8]`` (an unaligned store)."""
    sig = types.void(arr, idx, value)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        builder.store(args[2], ptr, align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):  # noqa: ANN001, ANN202, ARG001
    """The number of zero bits below the lowest set bit of uint64 `x` (`x` must not be 0)."""
    sig = types.uint64(x)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64, ir.IntType(1)])
        fn = builder.module.declare_intrinsic("llvm.cttz", [i64], fnty)
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen
