"""Sets of nodes as bitmaps (64 nodes per uint64 word), compiled.

The slurm mode asks "which nodes may this job use" for every start and every reservation.
Kept as bitmaps, that set is a few word operations (partition & ~excluded & free), and the
runs of consecutive usable nodes that cons_tres compares are found a word at a time, so a
choice costs O(words + runs) instead of O(nodes). Bits past the last node are always 0.

Every value here is uint64: numba turns uint64 mixed with int64 into float64.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros  # LLVM cttz; tz(0) == 64
from numba.extending import intrinsic

ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
ONE = np.uint64(1)
NONZERO, FULL = 0, 1  # rows of an availability bitmap: nodes with some / all CPUs free


@njit(cache=True)
def words(nodes):
    """Words of a bitmap of ``nodes`` nodes."""
    return (nodes + 63) // 64


@njit(cache=True, inline="always")
def bit_on(bits, n):
    bits[n >> 6] |= ONE << np.uint64(n & 63)


@njit(cache=True, inline="always")
def bit_off(bits, n):
    bits[n >> 6] &= ~(ONE << np.uint64(n & 63))


@njit(cache=True, inline="always")
def set_range(bits, a, b):
    """Set the bits of nodes a..b-1, a word at a time."""
    while a < b:
        lo = a & 63
        m = min(64 - lo, b - a)
        bits[a >> 6] |= (ONES >> np.uint64(64 - m)) << np.uint64(lo)
        a += m


@njit(cache=True)
def mask_bits(mask, out):
    """out: the bitmap of the nodes n with mask[n] != 0."""
    out[:] = 0
    for n in range(mask.shape[0]):
        if mask[n]:
            bit_on(out, n)


@njit(cache=True, inline="always")
def note_free(avail_bits, n, free, cpus):
    """Keep node n's two availability bits in step with its free CPUs."""
    if free > 0:
        bit_on(avail_bits[NONZERO], n)
    else:
        bit_off(avail_bits[NONZERO], n)
    if free == cpus:
        bit_on(avail_bits[FULL], n)
    else:
        bit_off(avail_bits[FULL], n)


@njit(cache=True)
def avail_bits_of(avail, node_cpus, out):
    """out (2, words): the availability bitmap of free-CPU counts ``avail``."""
    out[:] = 0
    for n in range(avail.shape[0]):
        note_free(out, n, avail[n], node_cpus[n])


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of a uint64 (LLVM ctpop: one instruction where the CPU has
    it)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)
    return types.uint64(types.uint64), codegen


@njit(cache=True, inline="always")
def word_cpus(x, w, avail, unit):
    """The free CPUs on the nodes of word w whose bits are set in x (x holds only nodes with
    free CPUs); with one CPU per node, that is the bit count."""
    if unit:
        return np.int64(popcount(x))
    c = 0
    while x != 0:
        c += avail[w * 64 + np.int64(trailing_zeros(x))]
        x &= x - ONE
    return c
