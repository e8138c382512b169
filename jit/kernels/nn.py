"""Kernels of the linear-algebra, convolution and pooling operators and of their gradient operators.

Each generator bakes the operator's attributes (strides, padding, pool sizes, slice bounds, axes) into
the kernel source as literals, so loop bounds and index arithmetic fold into constants, and generates
rank-specific code; sizes stay dynamic. Attributes or ranks the reference rejects give a kernel that
raises the reference's exception class; Numba has no float16, so float16 arguments get no kernel
(the generator raises NotImplementedError).

Design choices, measured on the 2-core development machine single-threaded (``OPENBLAS_NUM_THREADS=1``:
the figures below were taken while the float products still ran on a second OpenBLAS, see the first
point, whose pool made multi-threaded timings erratic); ms per call, float32 unless said:

- Float products (matmul, dense, conv2d and its gradients, the ``c + a @ b`` groups) call the CBLAS gemm
  of the BLAS NumPy itself loaded (``_gemm``, jit/kernels/blas.py), not Numba's ``np.dot``, which calls
  SciPy's OpenBLAS: one library keeps one BLAS thread pool in the process, shared with the user's NumPy
  code. With two pools, one's threads spin while the other's run: W2 took 2x its time when NumPy
  products alternated with its calls, 40x with another process on a core (bench/threads.py has the
  figures). ``_gemm`` reads C- and F-ordered operands as they are and copies other strides. BLAS sums
  in its own order, so float results match the reference within ``rtol * (|a| @ |b|)`` (rtol 1e-5
  float32, 1e-12 float64; the reference's own BLAS error is of that size). dense (64,784)x(256,784):
  0.30 vs NumPy 0.35.
- Integer products (matmul, dense, conv2d and its gradients) are loops accumulating in int64 or uint64,
  stored truncated: exact, wrapping as NumPy does (int32 dense (64,784)x(256,784): 0.8-1.2 vs NumPy 10.5).
- Float conv2d and both of its gradients use im2col + BLAS, one product per image (its columns stay
  in cache). backward_input multiplies a C-ordered copy of the weight's transpose (0.66 instead of 0.72
  with the transposed view); backward_weight accumulates g[n] @ cols.T in dw inside the product (beta 1):
  0.92x the time of a product into a temporary added to dw at the second LeNet size, 0.98x at the first.
  Fewer, larger products do not pay inside the kernels (AMD EPYC, 2 cores, batch 32, medians of
  interleaved runs): the products alone, one per block of B images, take 0.95-1.08x the per-image time
  for B = 2 to 8 and 1.01-1.3x for the whole batch, on one BLAS thread or two (NumPy loops over images
  look slower only by their Python overhead); whole kernels in blocks (im2col of the block, one
  product, the result or gradient moved between (N, O, P) and (O, B * P); two BLAS threads) took
  1.04-1.3x (conv2d), 0.92-1.03x (backward_input) and 0.94-1.14x (backward_weight) with 256 KB to 4 MB
  of columns, and up to 1.95x for all 256 images of a batch at once (32 MB). Products with the pixel
  axis first ((B * P, K) x (K, O)) run 15-25% faster at the second size, but with their transposes the
  kernels took 0.95-1.02x (backward_weight at the second size) to 1.95x. Images on jit/threads.py's
  workers took 0.65-0.86x at the second size (1.0-1.05x at the first) with OpenBLAS's thread count 1 for
  the whole process, but 1.0-1.3x while ``_gemm`` sets and restores that count around each product (a
  process-wide setting that concurrent products race on), so the kernels stay on the calling thread.
  Direct loops lose at both LeNet sizes (im2col / direct loops / NumPy reference):
  x (16,1,28,28) w (20,1,5,5): conv2d 0.11 / 0.39 / 0.48, backward_input 0.11 / 0.40 / 0.68,
  backward_weight 0.12 / 3.6 / 0.54; x (16,20,12,12) w (50,20,5,5): conv2d 0.77 / 4.2 / 1.23,
  backward_input 0.66 / 5.2 / 1.96, backward_weight 0.80 / 14.6 / 1.19.
- max_pool2d and avg_pool2d read a copy of x padded as the reference pads it (the lowest value, zeros),
  so every window loop has a constant trip count: (16,20,24,24) pool 2: 0.021 / 0.027 vs NumPy 3.6 / 1.6;
  pool 3 stride 1 padding 1: 0.44 (1.85 when clipping each window) vs 20. avg_pool2d sums each window
  row as NumPy's pairwise sum does, then the rows in order, which is NumPy 2's order for
  ``windows.sum(axis=(4, 5))``: bit for bit in every case tried (the tests allow 1e-6 / 1e-15 of the
  window's sum of magnitudes, should NumPy change its order).
- The pooling gradients clip windows to the image (padding is never read, so it never wins) and add in
  reverse window order, which is the reference's order of sums (it adds window taps in row-major tap
  order): exact. max_pool2d_backward and max_pool2d_gather first find every window's first maximum with
  branch-free selects into an index array, then scatter or gather: 0.10 / 0.055 vs 0.8 / 1.0 for one
  loop doing both, vs NumPy 4.9 / 5.1. The index array is int32 where the flat indices fit, which lets
  the maxima loop vectorize (0.18 / 0.16 with int64). "v beats m" with NaNs (``not (v <= m) and m == m``)
  keeps that loop from vectorizing with Numba 0.68 (W8's (32,20,24,24): 1.07 ms): the loop compares
  ``v > m``, exact without NaNs, flags a NaN it meets, and only then runs again with the NaN test (0.2 ms).
- The shape-only gradients (strided_slice, take, concatenate, pad) and scatter_add are exact;
  concatenate_backward and pad_backward return views of g. take_backward and scatter_add share
  ``accumulate(data, indices, updates)``, which adds in place (plain indexing: any layout, O(updates)
  work); the lowering calls scatter_add's in place on an adjoint nothing else sees (jit/lower.py).
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np

from .blas import gemm_import
from .registry import ArgType, generator, shared

_HEADER = "import numpy as np\nimport numba\n"
_LIMIT = 2**62  # slice bounds beyond any array size clamp to this (keeps them in int64)


def _module(*parts: str) -> str:
    """A kernel module: the imports, then each part (dedented)."""
    return _HEADER + "".join("\n\n" + textwrap.dedent(part).strip("\n") + "\n" for part in parts)


def _kernel(params: str, *body: str) -> str:
    """The ``kernel`` function: its body is the parts (each dedented) one after another."""
    lines = "\n".join(textwrap.indent(textwrap.dedent(part).strip("\n"), "    ") for part in body)
    return f"@numba.njit(cache=True)\ndef kernel({params}):\n{lines}\n"


def _raising(count: int, message: str) -> str:
    """A kernel of ``count`` arguments raising ValueError: what the reference does for these attributes and ranks."""
    params = ", ".join(f"a{i}" for i in range(count))
    return _module(
        f"""
        @numba.njit(cache=True)
        def kernel({params}):
            raise ValueError({message!r})
        """
    )


def _np(dtype: str) -> str:
    """The NumPy scalar type of a dtype name, as kernel source."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def _is_float(dtype: str) -> bool:
    return np.dtype(dtype).kind == "f"


def _acc(dtype: str) -> str:
    """The accumulator type: the dtype for floats; int64 or uint64 for integers (wrapping, truncated on store)."""
    kind = np.dtype(dtype).kind
    return _np(dtype) if kind == "f" else ("np.uint64" if kind == "u" else "np.int64")


def _no_float16(op: str, args: Sequence[ArgType]) -> None:
    if any(a.dtype == "float16" for a in args):
        raise NotImplementedError(f"{op}: Numba has no float16, so there is no float16 kernel")


def _shape_tuple(dims: Sequence[str]) -> str:
    return "(" + "".join(f"{d}, " for d in dims) + ")"


def _product(dims: Sequence[str]) -> str:
    return " * ".join(dims) or "1"


# Matrix products ------------------------------------------------------------------------------

def _matmul_helpers(dtype: str) -> str:
    """``_mm(a, b, out)``: out = a @ b for 2-D a (m, k), b (k, n) and C-contiguous out: NumPy's BLAS for floats
    (jit/kernels/blas.py), exact loops for integers."""
    if _is_float(dtype):
        return gemm_import(dtype, ("_gemm", "_mm"))
    acc = _acc(dtype)
    return f"""
        @numba.njit(cache=True)
        def _mm(a, b, out):
            m, k = a.shape
            n = b.shape[1]
            row = np.empty(n, {acc})
            for i in range(m):
                row[:] = 0
                for p in range(k):
                    av = {acc}(a[i, p])
                    for j in range(n):
                        row[j] += av * {acc}(b[p, j])
                for j in range(n):
                    out[i, j] = row[j]
        """


@generator("matmul")
def matmul(attrs: dict, args: list[ArgType]) -> str:
    """np.matmul of ranks >= 2: the batch axes broadcast, each batch entry is one 2-D product."""
    _no_float16("matmul", args)
    a, b = args
    if min(a.rank, b.rank) < 2:
        return _raising(2, f"matmul: both operands need rank >= 2, not {a.rank} and {b.rank}")
    dtype = _np(a.dtype)
    batch = max(a.rank, b.rank) - 2
    lines = [
        f"m = a.shape[{a.rank - 2}]",
        f"k = a.shape[{a.rank - 1}]",
        f"n = b.shape[{b.rank - 1}]",
        f"if b.shape[{b.rank - 2}] != k:",
        "    raise ValueError('matmul: the inner dimensions of the operands differ (a (..., m, k) @ b (..., k, n))')",
    ]
    for i in range(batch):
        ia, ib = i - (batch - a.rank + 2), i - (batch - b.rank + 2)
        lines += [
            f"da{i} = {f'a.shape[{ia}]' if ia >= 0 else '1'}",
            f"db{i} = {f'b.shape[{ib}]' if ib >= 0 else '1'}",
            f"if da{i} != db{i} and da{i} != 1 and db{i} != 1:",
            "    raise ValueError('matmul: the batch dimensions of the operands do not broadcast')",
            f"o{i} = db{i} if da{i} == 1 else da{i}",
        ]
    lines += ["pa = 1", "pb = 1"]
    for i in reversed(range(batch)):  # row-major strides of the batch entries; 0 along broadcast axes
        lines += [f"sa{i} = 0 if da{i} == 1 else pa", f"pa *= da{i}"]
        lines += [f"sb{i} = 0 if db{i} == 1 else pb", f"pb *= db{i}"]
    out_dims = [f"o{i}" for i in range(batch)]
    if batch == 0 and _is_float(a.dtype):
        # One product: BLAS takes C- and F-ordered operands as they are (a transposed weight in a gradient is a
        # view; copying it to C order costs more than the product); ``_gemm`` copies other strides.
        lines += [f"out = np.empty((m, n), {dtype})", "_gemm(a, b, out, 0.0)", "return out"]
        return _module(gemm_import(a.dtype), _kernel("a, b", "\n".join(lines)))
    lines += [
        "a3 = np.ascontiguousarray(a).reshape((pa, m, k))",
        "b3 = np.ascontiguousarray(b).reshape((pb, k, n))",
        f"out = np.empty({_shape_tuple(out_dims + ['m', 'n'])}, {dtype})",
        f"o3 = out.reshape(({_product(out_dims)}, m, n))",
        "t = 0",
    ]
    for i in range(batch):
        lines.append("    " * i + f"for i{i} in range(o{i}):")
    offset_a = " + ".join(f"i{i} * sa{i}" for i in range(batch)) or "0"
    offset_b = " + ".join(f"i{i} * sb{i}" for i in range(batch)) or "0"
    lines += [
        "    " * batch + f"_mm(a3[{offset_a}], b3[{offset_b}], o3[t])",
        "    " * batch + "t += 1",
        "return out",
    ]
    return _module(_matmul_helpers(a.dtype), _kernel("a, b", "\n".join(lines)))


def matmul_add_source(dtype: str) -> str:
    """The module of a ``c + a @ b`` group (2-D float operands of one dtype, jit/passes/products.py):
    ``accumulate(c, a, b)`` adds the product into ``c`` in place with one BLAS gemm (beta = 1), so a
    gradient summed over steps is never a stack of products added at the end; ``kernel(c, a, b)`` does
    it on a C-ordered copy of ``c``. BLAS reads C- and F-ordered operands as they are (a transposed
    view is F-ordered); other strides are copied first (``_gemm``, jit/kernels/blas.py)."""
    if dtype not in ("float32", "float64"):
        raise NotImplementedError(f"matmul_add: no BLAS gemm for {dtype}")
    return _module(
        gemm_import(dtype),
        """
        @numba.njit(cache=True)
        def accumulate(c, a, b):
            m, k = a.shape
            n = b.shape[1]
            if b.shape[0] != k:
                raise ValueError('matmul: the inner dimensions of the operands differ (a (..., m, k) @ b (..., k, n))')
            if c.shape[0] != m or c.shape[1] != n:
                raise ValueError('add: the operands do not broadcast to one shape')
            _gemm(a, b, c, 1.0)
            return c
        """,
        _kernel("c, a, b", "return accumulate(np.ascontiguousarray(c).copy(), a, b)"),
    )


@generator("dense")
def dense(attrs: dict, args: list[ArgType]) -> str:
    """x @ w.T (+ b) as one 2-D product of x's rows with w's rows, then the bias added in place."""
    _no_float16("dense", args)
    x, w = args[0], args[1]
    params = "x, w, b" if len(args) == 3 else "x, w"
    if w.rank != 2:
        return _raising(len(args), f"dense: the weight needs shape (units, in_features), not rank {w.rank}")
    if x.rank == 0:
        return _raising(len(args), "dense: the input needs rank >= 1, not 0")
    dtype, acc = _np(x.dtype), _acc(x.dtype)
    rows = [f"x.shape[{i}]" for i in range(x.rank - 1)]
    if _is_float(x.dtype):
        product = "_mm(x2, np.ascontiguousarray(w).T, out)"
        helper = _matmul_helpers(x.dtype)
    else:
        product = "_mt(x2, np.ascontiguousarray(w), out)"
        helper = f"""
            @numba.njit(cache=True)
            def _mt(x, w, out):
                m, k = x.shape
                u = w.shape[0]
                for i in range(m):
                    for j in range(u):
                        total = {acc}(0)
                        for p in range(k):
                            total += {acc}(x[i, p]) * {acc}(w[j, p])
                        out[i, j] = total
            """
    result = f"out.reshape({_shape_tuple(rows + ['u'])})"
    if len(args) == 2:
        tail = f"return {result}"
    elif args[2].rank == 1:
        tail = f"""
            bc = np.ascontiguousarray(b)
            if bc.shape[0] != u and bc.shape[0] != 1:
                raise ValueError('dense: the bias does not broadcast to the units (weight rows)')
            for i in range(mrows):
                for j in range(u):
                    out[i, j] += bc[j if bc.shape[0] == u else 0]
            return {result}
            """
    else:
        tail = f"return {result} + b"
    head = f"""
        k = x.shape[{x.rank - 1}]
        u = w.shape[0]
        if w.shape[1] != k:
            raise ValueError('dense: the input does not have as many features as the weight (units, in_features)')
        mrows = {_product(rows)}
        x2 = np.ascontiguousarray(x).reshape((mrows, k))
        out = np.empty((mrows, u), {dtype})
        {product}
        """
    return _module(helper, _kernel(params, head, tail))


# Convolution ----------------------------------------------------------------------------------

_CONV_SHAPES = {  # where N, C, H, W and O, KH, KW come from, and the name of the gradient argument
    "conv2d": ("x", "w", None),
    "conv2d_backward_input": ("like", "w", "g"),
    "conv2d_backward_weight": ("x", "like", "g"),
}
_CONV_PARAMS = {"conv2d": "x, w", "conv2d_backward_input": "g, w, like", "conv2d_backward_weight": "g, x, like"}


def _transposed_sizes(op: str, attrs: dict) -> str:
    """N, C, H, W of conv2d_backward_input without like: the sizes that output_padding picks
    (conv2d_transpose's); an empty g image leaves no window, which the preamble's check reports."""
    (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (attrs[k] for k in ("strides", "padding", "dilation", "output_padding"))
    return f"""
        N = g.shape[0]
        C = w.shape[1]
        H = (g.shape[2] - 1) * {sh} - {2 * ph} + {dh} * (w.shape[2] - 1) + {oh + 1}
        W = (g.shape[3] - 1) * {sw} - {2 * pw} + {dw} * (w.shape[3] - 1) + {ow + 1}
        if H < 0 or W < 0:
            raise ValueError('{op}: the padding leaves a negative output size')
        """


def _conv_preamble(op: str, strides: tuple, padding: tuple, dilation: tuple, sizes: str | None = None
                   ) -> tuple[str, str]:
    """Sizes (N, C, H, W from ``sizes``, else from the image argument), then the reference's
    ValueError checks and OH, OW: two parts of the kernel's body."""
    image, weight, gradient = _CONV_SHAPES[op]
    (sh, sw), (ph, pw), (dh, dw) = strides, padding, dilation
    code = f"""
        O, CW, KH, KW = {weight}.shape
        if CW != C:
            raise ValueError('{op}: the input (NCHW) and the weight (OIHW) differ in the number of channels')
        if KH < 1 or KW < 1:
            raise ValueError('{op}: the kernel window must be at least 1 x 1')
        if H + {2 * ph} < {dh} * (KH - 1) + 1 or W + {2 * pw} < {dw} * (KW - 1) + 1:
            raise ValueError('{op}: the (dilated) kernel window does not fit in the padded input')
        OH = (H + {2 * ph} - {dh} * (KH - 1) - 1) // {sh} + 1
        OW = (W + {2 * pw} - {dw} * (KW - 1) - 1) // {sw} + 1
        """
    if gradient:
        code += f"""
        if {gradient}.shape != (N, O, OH, OW):
            raise ValueError('{op}: the gradient does not have the shape of the conv2d result (N, O, OH, OW)')
        """
    return sizes or f"N, C, H, W = {image}.shape", code


def _padded(name: str, dtype: str, padding: tuple) -> str:
    """``xp``: the NCHW ``name`` zero-padded (contiguous)."""
    ph, pw = padding
    if ph == pw == 0:
        return f"xp = np.ascontiguousarray({name})"
    return f"""
        xp = np.zeros((N, C, H + {2 * ph}, W + {2 * pw}), {dtype})
        xp[:, :, {ph}:{ph} + H, {pw}:{pw} + W] = {name}
        """


def _conv_helpers(op: str, strides: tuple, dilation: tuple) -> str:
    """The float path's data movement, imported from a shared module (conv2d and backward_weight use the
    same): ``_im2col`` (conv2d and backward_weight) puts image n's window taps (c, p, q) in the rows of
    ``cols`` (K, OH * OW); ``_col2im`` (backward_input) adds such columns back into padded image n."""
    (sh, sw), (dh, dw) = strides, dilation
    tap = f"i * {sh} + p * {dh}, j * {sw} + q * {dw}"
    if op == "conv2d_backward_input":
        head, image, statement = "_col2im(cols, dxp, n, kh, kw, oh, ow)", "dxp", f"dxp[n, c, {tap}] += cols[r, i * ow + j]"
    else:
        head, image, statement = "_im2col(xp, n, cols, kh, kw, oh, ow)", "xp", f"cols[r, i * ow + j] = xp[n, c, {tap}]"
    source = _module(f"""
        @numba.njit(cache=True)
        def {head}:
            for c in range({image}.shape[1]):
                for p in range(kh):
                    for q in range(kw):
                        r = (c * kh + p) * kw + q
                        for i in range(oh):
                            for j in range(ow):
                                {statement}
        """)
    return shared(source, "conv_data", (head.split("(")[0],))


def _conv_body(op: str, dtype_name: str, strides: tuple, padding: tuple, dilation: tuple) -> tuple[str, ...]:
    """The computation after the preamble: im2col + BLAS for floats, one image at a time (design notes
    above), backward_weight accumulating each image's product in dw (beta 1); direct exact loops for integers."""
    dtype, acc = _np(dtype_name), _acc(dtype_name)
    (sh, sw), (ph, pw), (dh, dw) = strides, padding, dilation
    tap = f"i * {sh} + p * {dh}, j * {sw} + q * {dw}"
    crop = f"np.ascontiguousarray(dxp[:, :, {ph}:{ph} + H, {pw}:{pw} + W])" if ph or pw else "dxp"
    padded = _padded("x", dtype, padding)
    if _is_float(dtype_name):
        sizes = """
            K = C * KH * KW
            P = OH * OW
            """
        if op == "conv2d":
            return padded, sizes, f"""
                w2 = np.ascontiguousarray(w).reshape((O, K))
                out = np.empty((N, O, OH, OW), {dtype})
                o3 = out.reshape((N, O, P))
                cols = np.empty((K, P), {dtype})
                for n in range(N):
                    _im2col(xp, n, cols, KH, KW, OH, OW)
                    _mm(w2, cols, o3[n])
                return out
                """
        if op == "conv2d_backward_input":
            return sizes, f"""
                g3 = np.ascontiguousarray(g).reshape((N, O, P))
                wt = np.ascontiguousarray(np.ascontiguousarray(w).reshape((O, K)).T)
                dxp = np.zeros((N, C, H + {2 * ph}, W + {2 * pw}), {dtype})
                cols = np.empty((K, P), {dtype})
                for n in range(N):
                    _mm(wt, g3[n], cols)
                    _col2im(cols, dxp, n, KH, KW, OH, OW)
                return {crop}
                """
        return padded, sizes, f"""
            g3 = np.ascontiguousarray(g).reshape((N, O, P))
            cols = np.empty((K, P), {dtype})
            dw = np.zeros((O, K), {dtype})
            for n in range(N):
                _im2col(xp, n, cols, KH, KW, OH, OW)
                _gemm(g3[n], cols.T, dw, 1.0)
            return dw.reshape((O, C, KH, KW))
            """
    if op == "conv2d":
        return padded, f"""
            wc = np.ascontiguousarray(w)
            out = np.zeros((N, O, OH, OW), {dtype})
            for n in range(N):
                for o in range(O):
                    for c in range(C):
                        for p in range(KH):
                            for q in range(KW):
                                wv = {acc}(wc[o, c, p, q])
                                for i in range(OH):
                                    for j in range(OW):
                                        out[n, o, i, j] += wv * {acc}(xp[n, c, {tap}])
            return out
            """
    if op == "conv2d_backward_input":
        return (f"""
            gc = np.ascontiguousarray(g)
            wc = np.ascontiguousarray(w)
            dxp = np.zeros((N, C, H + {2 * ph}, W + {2 * pw}), {dtype})
            for n in range(N):
                for o in range(O):
                    for c in range(C):
                        for p in range(KH):
                            for q in range(KW):
                                wv = {acc}(wc[o, c, p, q])
                                for i in range(OH):
                                    for j in range(OW):
                                        dxp[n, c, {tap}] += wv * {acc}(gc[n, o, i, j])
            return {crop}
            """,)
    return padded, f"""
        gc = np.ascontiguousarray(g)
        dw = np.empty((O, C, KH, KW), {dtype})
        for o in range(O):
            for c in range(C):
                for p in range(KH):
                    for q in range(KW):
                        total = {acc}(0)
                        for n in range(N):
                            for i in range(OH):
                                for j in range(OW):
                                    total += {acc}(gc[n, o, i, j]) * {acc}(xp[n, c, {tap}])
                        dw[o, c, p, q] = total
        return dw
        """


@generator("conv2d")
def conv2d(attrs: dict, args: list[ArgType]) -> str:
    """Cross-correlation of NCHW x with OIHW w, specialized to strides, padding and dilation (groups
    and out_dtype are lowered to the plain form before kernels are made: relayish/ops/nn.py)."""
    return _conv_source("conv2d", attrs, args)


@generator("conv2d_backward_input")
def conv2d_backward_input(attrs: dict, args: list[ArgType]) -> str:
    """Each output gradient times each kernel tap, added back where the tap read (g, w[, like])."""
    return _conv_source("conv2d_backward_input", attrs, args)


@generator("conv2d_backward_weight")
def conv2d_backward_weight(attrs: dict, args: list[ArgType]) -> str:
    """Each weight tap's gradient: the output gradients against the inputs it read (g, x, like)."""
    return _conv_source("conv2d_backward_weight", attrs, args)


def _conv_source(op: str, attrs: dict, args: Sequence[ArgType]) -> str:
    """The kernel of conv2d (its plain form: groups and out_dtype are lowered) or of a gradient;
    conv2d_backward_input without like computes its sizes (``_transposed_sizes``)."""
    _no_float16(op, args)
    strides, padding, dilation = attrs["strides"], attrs["padding"], attrs["dilation"]
    output_padding = attrs.get("output_padding", (0, 0))
    if any(a.rank != 4 for a in args):
        ranks = [a.rank for a in args]
        return _raising(len(args), f"{op}: every argument must have rank 4 (NCHW, OIHW), not {ranks}")
    if min(strides + dilation) < 1 or min(padding) < 0:
        message = f"{op}: strides {strides} and dilation {dilation} must be >= 1, padding {padding} >= 0"
        return _raising(len(args), message)
    unliked = len(args) == 2 and op == "conv2d_backward_input"
    if not all(0 <= o < s for o, s in zip(output_padding, strides)) or (output_padding != (0, 0) and not unliked):
        message = f"{op}: output_padding {output_padding} must be below the strides {strides}, and 0 with like"
        return _raising(len(args), message)
    dtype = args[0].dtype
    helpers = [_conv_helpers(op, strides, dilation), _matmul_helpers(dtype)] if _is_float(dtype) else []
    preamble = _conv_preamble(op, strides, padding, dilation, _transposed_sizes(op, attrs) if unliked else None)
    params = "g, w" if unliked else _CONV_PARAMS[op]
    return _module(*helpers, _kernel(params, *preamble, *_conv_body(op, dtype, strides, padding, dilation)))


# Pooling --------------------------------------------------------------------------------------

def _pool_geometry(op: str, attrs: dict, args: Sequence[ArgType]) -> tuple[tuple, tuple, tuple] | str:
    """(pool_size, strides, padding), or the source of the kernel raising what the reference raises."""
    _no_float16(op, args)
    pool, padding = attrs["pool_size"], attrs["padding"]
    strides = attrs["strides"] or pool
    if any(a.rank != 4 for a in args):
        ranks = [a.rank for a in args]
        return _raising(len(args), f"{op}: every argument must be an NCHW tensor of rank 4, not ranks {ranks}")
    if min(pool + strides) < 1 or min(padding) < 0:
        return _raising(len(args), f"{op}: pool_size {pool} and strides {strides} must be >= 1, padding {padding} >= 0")
    return pool, strides, padding


def _pool_preamble(op: str, dtype: str, pool: tuple, strides: tuple, padding: tuple, fill: str | None = None) -> str:
    """Sizes, the window check, OH, OW and ``xc``: x contiguous, or (``fill``) x padded with fill."""
    (kh, kw), (sh, sw), (ph, pw) = pool, strides, padding
    code = textwrap.dedent(f"""
        N, C, H, W = x.shape
        if H + {2 * ph} < {kh} or W + {2 * pw} < {kw}:
            raise ValueError('{op}: the pooling window does not fit in the padded input')
        OH = (H + {2 * ph} - {kh}) // {sh} + 1
        OW = (W + {2 * pw} - {kw}) // {sw} + 1
        """)
    if fill is None or ph == pw == 0:
        return code + "xc = np.ascontiguousarray(x)\n"
    return code + (
        f"xc = np.full((N, C, H + {2 * ph}, W + {2 * pw}), {fill}, {dtype})\n"
        f"xc[:, :, {ph}:{ph} + H, {pw}:{pw} + W] = x\n"
    )


def _pool_loops(pool: tuple, strides: tuple, padding: tuple | None, body: str, reverse: bool = False) -> str:
    """Loops over every window (n, c, i, j) running ``body`` (dedented) with the window's rows hlo:hhi
    and columns wlo:whi: clipped to the image for ``padding``, or (None) the whole window in a padded xc.
    ``reverse`` visits the windows in reverse row-major order."""
    (kh, kw), (sh, sw) = pool, strides
    ph, pw = padding or (0, 0)
    order = ("range(OH - 1, -1, -1)", "range(OW - 1, -1, -1)") if reverse else ("range(OH)", "range(OW)")
    rows = f"hlo = max(i * {sh} - {ph}, 0)\nhhi = min(i * {sh} - {ph} + {kh}, H)" if ph else (
        f"hlo = i * {sh}\nhhi = hlo + {kh}"
    )
    cols = f"wlo = max(j * {sw} - {pw}, 0)\nwhi = min(j * {sw} - {pw} + {kw}, W)" if pw else (
        f"wlo = j * {sw}\nwhi = wlo + {kw}"
    )
    return (
        "for n in range(N):\n    for c in range(C):\n"
        f"        for i in {order[0]}:\n{textwrap.indent(rows, ' ' * 12)}\n"
        f"            for j in {order[1]}:\n{textwrap.indent(cols, ' ' * 16)}\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 16)
    )


def _first_maximum(dtype: str, clipped: bool, exact: bool) -> str:
    """Body setting ``at`` to the flat index (a * W + b) of the window's first maximum in row-major order,
    a NaN counting as the maximum, or to -1 for a window wholly in the padding (``clipped`` windows only).
    ``exact``: NaNs handled by branch-free selects (``not (v <= m) and m == m`` is "v beats m" with NaNs);
    else, for floats, ``v > m``, exact where the window has no NaN, with ``bad`` set on meeting one: that
    loop vectorizes, the exact one does not (W8's first pooling: 0.2 ms against 1.3)."""
    floats = _is_float(dtype)
    better = "(not (v <= m)) & (m == m)" if floats and exact else "v > m"
    tap = ["v = xc[n, c, a, b]", *(["bad |= v != v"] if floats and not exact else []), f"better = {better}",
           "m = v if better else m", "at = a * W + b if better else at"]
    scan = "\n".join(["m = xc[n, c, hlo, wlo]", "at = hlo * W + wlo", "for a in range(hlo, hhi):",
                      "    for b in range(wlo, whi):", *("        " + line for line in tap)])
    return "at = -1\nif hlo < hhi and wlo < whi:\n" + textwrap.indent(scan, "    ") if clipped else scan


def _pairwise(term: str, count: int, lo: int = 0) -> str:
    """NumPy's pairwise summation of term.format(lo) .. term.format(lo + count - 1) as an expression
    (numpy/_core/src/umath/loops_utils.h.src: sequential below 8 terms, 8 interleaved partial sums up to
    128, halves beyond)."""
    if count < 8:
        return "(" + " + ".join(term.format(lo + i) for i in range(count)) + ")"
    if count <= 128:
        whole = count - count % 8
        lanes = ["(" + " + ".join(term.format(lo + i + lane) for i in range(0, whole, 8)) + ")" for lane in range(8)]
        r = lanes
        tree = f"((({r[0]} + {r[1]}) + ({r[2]} + {r[3]})) + (({r[4]} + {r[5]}) + ({r[6]} + {r[7]})))"
        return "(" + " + ".join([tree] + [term.format(lo + i) for i in range(whole, count)]) + ")"
    half = count // 2 - (count // 2) % 8
    return f"({_pairwise(term, half, lo)} + {_pairwise(term, count - half, lo + half)})"


@generator("max_pool2d")
def max_pool2d(attrs: dict, args: list[ArgType]) -> str:
    """The maximum over each window of x padded with the lowest value (NaN wins)."""
    geometry = _pool_geometry("max_pool2d", attrs, args)
    if isinstance(geometry, str):
        return geometry
    dtype_name = args[0].dtype
    dtype = _np(dtype_name)
    if _is_float(dtype_name):
        lowest, start, track, result = f"{dtype}(-np.inf)", "nan = False", "nan |= v != v", "np.nan if nan else m"
    else:
        lowest, start, track, result = f"{dtype}({np.iinfo(dtype_name).min})", "", "", "m"
    body = f"""
        m = {lowest}
        {start}
        for a in range(hlo, hhi):
            for b in range(wlo, whi):
                v = xc[n, c, a, b]
                m = v if v > m else m
                {track}
        out[n, c, i, j] = {result}
        """
    return _module(
        _kernel(
            "x",
            _pool_preamble("max_pool2d", dtype, *geometry, fill=lowest),
            f"out = np.empty((N, C, OH, OW), {dtype})",
            _pool_loops(geometry[0], geometry[1], None, body),
            "return out",
        )
    )


@generator("avg_pool2d")
def avg_pool2d(attrs: dict, args: list[ArgType]) -> str:
    """Each row of each zero-padded window summed as NumPy's pairwise sum does, the rows added in order
    (NumPy's order for windows.sum(axis=(4, 5))), then divided."""
    geometry = _pool_geometry("avg_pool2d", attrs, args)
    if isinstance(geometry, str):
        return geometry
    (kh, kw), _, (ph, pw) = geometry
    dtype = _np(args[0].dtype)
    if kw < 8:
        row = f"row = {dtype}(0)\nfor b in range(wlo, whi):\n    row += xc[n, c, a, b]"
    else:
        row = f"row = {_pairwise('xc[n, c, a, wlo + {}]', kw)}"
    if attrs["count_include_pad"]:
        divide = f"out[n, c, i, j] = total / {dtype}({kh * kw})"
    else:  # the in-image part of the window, in padded coordinates
        divide = (
            f"count = max(min(hhi, {ph} + H) - max(hlo, {ph}), 0) * max(min(whi, {pw} + W) - max(wlo, {pw}), 0)\n"
            f"out[n, c, i, j] = total / {dtype}(count) if count > 0 else np.nan"
        )
    body = f"total = {dtype}(0)\nfor a in range(hlo, hhi):\n{textwrap.indent(row, '    ')}\n    total += row\n{divide}"
    return _module(
        _kernel(
            "x",
            _pool_preamble("avg_pool2d", dtype, *geometry, fill=f"{dtype}(0)"),
            f"out = np.empty((N, C, OH, OW), {dtype})",
            _pool_loops(geometry[0], geometry[1], None, body),
            "return out",
        )
    )


def _maxima(geometry: tuple[tuple, tuple, tuple], dtype: str) -> str:
    """``_maxima(xc, idx)``: each window's first maximum (``_first_maximum``) stored in idx (N, C, OH, OW),
    which is returned: for floats a vectorizing pass, then the exact pass over every window only when the
    first met a NaN.
    Callers pass int32 indices where the image's flat indices fit: the loop then vectorizes (16x20x24x24,
    pool 2: 0.035 ms instead of 0.135 with int64)."""
    pool, strides, padding = geometry
    clipped = padding != (0, 0)

    def loops(exact: bool) -> str:
        return _pool_loops(pool, strides, padding, _first_maximum(dtype, clipped, exact) + "\nidx[n, c, i, j] = at")

    body = loops(exact=True)
    if _is_float(dtype):
        body = f"bad = False\n{loops(exact=False)}\nif bad:\n{textwrap.indent(body, '    ')}"
    return (
        "@numba.njit(cache=True)\ndef _maxima(xc, idx):\n"
        "    N, C, H, W = xc.shape\n    OH, OW = idx.shape[2], idx.shape[3]\n"
        + textwrap.indent(body, "    ") + "\n    return idx\n"
    )


def _with_maxima(call: str) -> str:
    """Kernel lines returning ``call`` (source with ``{}`` for the index array), the maxima in int32 where
    every flat index a * W + b fits (one branch per index dtype: Numba gives a variable one type)."""
    return f"""
        if H * W <= 2**31:
            return {call.format("_maxima(xc, np.empty((N, C, OH, OW), np.int32))")}
        return {call.format("_maxima(xc, np.empty((N, C, OH, OW), np.int64))")}
        """


@generator("max_pool2d_backward")
def max_pool2d_backward(attrs: dict, args: list[ArgType]) -> str:
    """Each window's g added at its first maximum: the maxima first (a loop without stores that may
    collide, 2x faster), then the sums over the windows in reverse order (the reference's order of sums)."""
    geometry = _pool_geometry("max_pool2d_backward", attrs, args)
    if isinstance(geometry, str):
        return geometry
    dtype = _np(args[0].dtype)
    scatter = f"""
        @numba.njit(cache=True)
        def _scatter(gc, idx, H, W):
            N, C, OH, OW = idx.shape
            dx = np.zeros((N, C, H * W), {dtype})
            for n in range(N):
                for c in range(C):
                    for i in range(OH - 1, -1, -1):
                        for j in range(OW - 1, -1, -1):
                            at = idx[n, c, i, j]
                            if at >= 0:
                                dx[n, c, at] += gc[n, c, i, j]
            return dx.reshape((N, C, H, W))
        """
    check = """
        if g.shape != (N, C, OH, OW):
            raise ValueError('max_pool2d_backward: the gradient does not have the shape of the max_pool2d result')
        gc = np.ascontiguousarray(g)
        """
    return _module(
        _maxima(geometry, args[1].dtype),
        scatter,
        _kernel(
            "g, x",
            _pool_preamble("max_pool2d_backward", dtype, *geometry),
            check,
            _with_maxima("_scatter(gc, {}, H, W)"),
        ),
    )


@generator("max_pool2d_gather")
def max_pool2d_gather(attrs: dict, args: list[ArgType]) -> str:
    """h at each window's first maximum of x (0 for a window wholly in the padding); the maxima first,
    as in max_pool2d_backward (a loop picking h's values as it goes is 4x slower)."""
    geometry = _pool_geometry("max_pool2d_gather", attrs, args)
    if isinstance(geometry, str):
        return geometry
    dtype = _np(args[0].dtype)
    pick = f"""
        @numba.njit(cache=True)
        def _pick(hf, idx):
            N, C, OH, OW = idx.shape
            out = np.empty((N, C, OH, OW), {dtype})
            for n in range(N):
                for c in range(C):
                    for i in range(OH):
                        for j in range(OW):
                            at = idx[n, c, i, j]
                            out[n, c, i, j] = hf[n, c, at] if at >= 0 else 0
            return out
        """
    check = """
        if h.shape != x.shape:
            raise ValueError('max_pool2d_gather: h and x must have the same shape')
        hf = np.ascontiguousarray(h).reshape((N, C, H * W))
        """
    return _module(
        _maxima(geometry, args[1].dtype),
        pick,
        _kernel(
            "h, x",
            _pool_preamble("max_pool2d_gather", dtype, *geometry),
            check,
            _with_maxima("_pick(hf, {})"),
        ),
    )


@generator("avg_pool2d_backward")
def avg_pool2d_backward(attrs: dict, args: list[ArgType]) -> str:
    """Each window's g, divided as the forward mean divides, spread over its in-image elements; windows in
    reverse order, which is the reference's order of sums."""
    geometry = _pool_geometry("avg_pool2d_backward", attrs, args)
    if isinstance(geometry, str):
        return geometry
    pool, strides, padding = geometry
    dtype = _np(args[0].dtype)
    if attrs["count_include_pad"]:
        share = f"share = gc[n, c, i, j] / {dtype}({pool[0] * pool[1]})"
    else:
        share = (
            f"count = (hhi - hlo) * (whi - wlo)\nif count == 0:\n    continue\nshare = gc[n, c, i, j] / {dtype}(count)"
        )
    body = share + "\nfor a in range(hlo, hhi):\n    for b in range(wlo, whi):\n        dx[n, c, a, b] += share"
    check = """
        if g.shape != (N, C, OH, OW):
            raise ValueError('avg_pool2d_backward: the gradient does not have the shape of the avg_pool2d result')
        """
    return _module(
        _kernel(
            "g, x",
            _pool_preamble("avg_pool2d_backward", dtype, *geometry),
            check,
            f"gc = np.ascontiguousarray(g)\ndx = np.zeros((N, C, H, W), {dtype})",
            _pool_loops(pool, strides, padding, body, reverse=True),
            "return dx",
        )
    )


# Gradients of shape operators -----------------------------------------------------------------


def _clamp(bound: int) -> int:
    return max(-_LIMIT, min(_LIMIT, bound))


@generator("strided_slice_backward")
def strided_slice_backward(attrs: dict, args: list[ArgType]) -> str:
    """Zeros of like's shape with g written through the slice (Numba slices clamp as Python does)."""
    op = "strided_slice_backward"
    _no_float16(op, args)
    g, like = args
    begin, end, strides, axes = attrs["begin"], attrs["end"], attrs["strides"], attrs["axes"]
    axes = tuple(range(len(begin))) if axes is None else axes
    strides = (1,) * len(begin) if strides is None else strides
    if not len(begin) == len(end) == len(strides) == len(axes):
        lengths = f"{len(begin)}, {len(end)}, {len(strides)} and {len(axes)}"
        return _raising(2, f"{op}: begin, end, strides and axes have lengths {lengths}; they must be equal")
    index = [":"] * like.rank
    for axis, start, stop, step in zip(axes, begin, end, strides):
        if not -like.rank <= axis < like.rank:
            return _raising(2, f"{op}: axis {axis} is out of range for rank {like.rank}")
        if index[axis % like.rank] != ":":
            return _raising(2, f"{op}: axis {axis % like.rank} is sliced twice")
        if step == 0:
            return _raising(2, f"{op}: a stride is 0")
        index[axis % like.rank] = f"{_clamp(start)}:{_clamp(stop)}:{step}"
    dtype = _np(g.dtype)
    message = f"{op}: the gradient does not have the shape of the strided_slice result"
    if g.rank != like.rank:
        return _raising(2, message)
    if like.rank == 0:
        return _module(_kernel("g, like", f"out = np.zeros((), {dtype})\nout[()] = g[()]\nreturn out"))
    body = f"""
        out = np.zeros(like.shape, {dtype})
        view = out[{", ".join(index)}]
        if view.shape != g.shape:
            raise ValueError({message!r})
        view[...] = g
        return out
        """
    return _module(_kernel("g, like", body))


def _indexed(name: str, index: Sequence[str]) -> str:
    return f"{name}[{', '.join(index) or '()'}]"


def _nested(heads: Sequence[str], body: str) -> str:
    """``body`` (dedented) inside the ``heads`` (``for`` lines), each head inside the one before."""
    lines = textwrap.dedent(body).strip("\n")
    for head in reversed(heads):
        lines = f"{head}\n{textwrap.indent(lines, '    ')}"
    return lines


def _accumulate(op: str, what: str, data: ArgType, indices: ArgType, updates: ArgType, axis: int | None) -> str:
    """The ``accumulate(data, indices, updates)`` function of take's adjoint: after the reference's
    checks (every index in range, then ``updates`` of take's result shape), updates added into data in
    place at the indices along ``axis`` (None: the flat index), each element in the reference's order
    (np.add.at); returns data. Plain indexing, so any layout works and nothing is copied: O(updates)
    work. ``what`` names updates in messages."""
    head = "@numba.njit(cache=True)\ndef accumulate(data, indices, updates):\n"
    if axis is not None and not -data.rank <= axis < data.rank:
        return f"{head}    raise ValueError({f'{op}: axis {axis} is out of range for rank {data.rank}'!r})\n"
    axis = None if axis is None else axis % data.rank
    t = [f"t{k}" for k in range(indices.rank)]
    over_indices = [f"for t{k} in range(indices.shape[{k}]):" for k in range(indices.rank)]
    index_dims = [f"indices.shape[{k}]" for k in range(indices.rank)]
    o = [f"o{i}" for i in range(data.rank)]
    if axis is None:
        size, where, expected = _product([f"data.shape[{i}]" for i in range(data.rank)]), "the flattened data", index_dims
        unravel = [f"o{i} = k % data.shape[{i}]\nk //= data.shape[{i}]" for i in range(data.rank - 1, 0, -1)]
        place = "\n".join([f"k = np.int64({_indexed('indices', t)})", *unravel, "o0 = k"] if data.rank else [])
        add = _nested(over_indices, f"{place}\n{_indexed('data', o)} += {_indexed('updates', t)}")
    else:
        size, where = f"data.shape[{axis}]", f"axis {axis}"
        expected = [f"data.shape[{i}]" for i in range(axis)] + index_dims + [
            f"data.shape[{i}]" for i in range(axis + 1, data.rank)]
        loops = [f"for o{i} in range(data.shape[{i}]):" for i in range(data.rank)]
        inner = _nested(loops[axis + 1:], f"{_indexed('data', o[:axis] + ['k'] + o[axis + 1:])} += "
                        f"{_indexed('updates', o[:axis] + t + o[axis + 1:])}")
        add = _nested(loops[:axis] + over_indices, f"k = np.int64({_indexed('indices', t)})\n{inner}")
    at = _indexed("indices", t)
    check_indices = _nested(over_indices, f"""
        if np.int64({at}) < 0 or np.int64({at}) >= size:
            raise IndexError('{op}: index ' + str({at}) + ' is out of range for {where} of size ' + str(size))
        """)
    message = f"{op}: {what} does not have the shape of the take result"
    if updates.rank != len(expected):  # after the index checks, as the reference
        add = f"raise ValueError({message!r})"
    else:
        add = f"if updates.shape != {_shape_tuple(expected)}:\n    raise ValueError({message!r})\n{add}\nreturn data"
    return head + textwrap.indent(f"size = {size}\n{check_indices}\n{add}", "    ") + "\n"


def _take_adjoint(op: str, attrs: dict, args: list[ArgType], data: ArgType, updates: ArgType, what: str,
                  kernel: str) -> str:
    """The module of take's adjoint ``op``: ``accumulate`` (``_accumulate``), then ``kernel``, which
    calls it on a fresh array."""
    _no_float16(op, args)
    return _module(_accumulate(op, what, data, args[1], updates, attrs["axis"]), kernel)


@generator("take_backward")
def take_backward(attrs: dict, args: list[ArgType]) -> str:
    """Zeros of like's shape with g added at the indices, in the reference's order (np.add.at)."""
    g, _, like = args
    kernel = _kernel("g, indices, like", f"return accumulate(np.zeros(like.shape, {_np(g.dtype)}), indices, g)")
    return _take_adjoint("take_backward", attrs, args, like, g, "the gradient", kernel)


@generator("scatter_add")
def scatter_add(attrs: dict, args: list[ArgType]) -> str:
    """A C-contiguous copy of data with updates added at the indices: ``accumulate`` (which adds in
    place, for callers that own data) on a copy."""
    data, indices, updates = args
    kinds = np.dtype(data.dtype).kind + np.dtype(indices.dtype).kind
    if data.dtype != updates.dtype or kinds[0] not in "iuf" or kinds[1] not in "iu":
        raise TypeError(f"scatter_add needs numeric data and updates of one dtype and integer indices, not "
                        f"{data.dtype}, {indices.dtype} and {updates.dtype}")
    kernel = _kernel("data, indices, updates", "return accumulate(data.copy(), indices, updates)")
    return _take_adjoint("scatter_add", attrs, args, data, updates, "updates", kernel)


@generator("concatenate_backward")
def concatenate_backward(attrs: dict, args: list[ArgType]) -> str:
    """The piece of g along axis that concatenate took from part ``index``: a view of g."""
    op = "concatenate_backward"
    _no_float16(op, args)
    g, parts = args[0], args[1:]
    axis, index = attrs["axis"], attrs["index"]
    names = [f"x{k}" for k in range(len(parts))]
    params = ", ".join(["g"] + names)
    if not 0 <= index < len(parts):
        return _raising(len(args), f"{op}: index {index} is out of range for {len(parts)} parts")
    if not -g.rank <= axis < g.rank:
        return _raising(len(args), f"{op}: axis {axis} is out of range for the gradient of rank {g.rank}")
    axis %= g.rank
    if any(p.rank != g.rank for p in parts):
        return _raising(len(args), f"{op}: the parts do not all have the gradient's rank {g.rank}")
    lines = []
    for k, name in enumerate(names[1:], 2):
        same = " or ".join(f"{name}.shape[{d}] != x0.shape[{d}]" for d in range(g.rank) if d != axis) or "False"
        message = f"{op}: part {k} does not concatenate with part 1 along axis {axis}"
        lines += [f"if {same}:", f"    raise ValueError({message!r})"]
    joined = [f"x0.shape[{d}]" if d != axis else " + ".join(f"{n}.shape[{d}]" for n in names) for d in range(g.rank)]
    start = " + ".join(f"{n}.shape[{axis}]" for n in names[:index]) or "0"
    piece = [":"] * g.rank
    piece[axis] = f"start:start + {names[index]}.shape[{axis}]"
    lines += [
        f"if g.shape != {_shape_tuple(joined)}:",
        f"    raise ValueError('{op}: the gradient does not have the shape of the concatenate result')",
        f"start = {start}",
        f"return g[{', '.join(piece)}]",
    ]
    return _module(_kernel(params, "\n".join(lines)))


@generator("pad_backward")
def pad_backward(attrs: dict, args: list[ArgType]) -> str:
    """g without the padding: a view of g."""
    op = "pad_backward"
    _no_float16(op, args)
    g, x = args
    widths = attrs["pad_width"]
    if len(widths) != 2 * x.rank:
        return _raising(2, f"{op}: pad_width needs {2 * x.rank} numbers for rank {x.rank}, not {len(widths)}")
    if any(w < 0 for w in widths):
        return _raising(2, f"{op}: pad_width {widths} has a negative number")
    message = f"{op}: the gradient does not have the shape of the pad result"
    if g.rank != x.rank:
        return _raising(2, message)
    if x.rank == 0:
        return _module(_kernel("g, x", "return g.copy()"))
    padded = [f"x.shape[{i}] + {widths[2 * i] + widths[2 * i + 1]}" for i in range(x.rank)]
    piece = [f"{widths[2 * i]}:{widths[2 * i]} + x.shape[{i}]" for i in range(x.rank)]
    body = f"""
        if g.shape != {_shape_tuple(padded)}:
            raise ValueError({message!r})
        return g[{", ".join(piece)}]
        """
    return _module(_kernel("g, x", body))
