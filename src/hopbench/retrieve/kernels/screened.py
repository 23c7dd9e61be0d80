"""The top k, the minimum and the maximum of `rows @ q` for a block of queries, with the floats of
the one-query float64 product, from one float32 product over the block.

Why: HippoRAG's fact step min-max normalises `fact_embeddings @ q` over every fact and keeps
the top 5. One float64 mat-vec per question reads the whole fact matrix (190 MB on the 2Wiki
graph); a block of questions reads a float32 copy once. The float32 product only screens: each
of its entries is within `margin` of the exact dot product, so the rows that can be in the top
k, and those that can be the minimum, are few and known; their float64 values are then
computed with `same_float_rows`, which gives the floats of the full one-query product.

The bound (unit roundoff u = 2^-24, d terms): rounding f and q to float32 moves each product
by at most 2u|f_i q_i| (+u²), and any float32 summation order by at most γ_d Σ|x_i y_i|,
γ_d = d u / (1 - d u); with Σ|f_i q_i| <= ‖f‖ ‖q‖ the error is below (d + 3) u ‖f‖ ‖q‖; the
float64 product's own error (d 2^-53 ‖f‖ ‖q‖) is far below. `margin` doubles it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hopbench.retrieve.kernels._rows import same_float_rows

_U32 = 2.0**-24


@dataclass(frozen=True)
class Screened:
    """One query's exact floats where they matter: `values[i]` = (rows @ q)[rows_kept[i]]."""

    rows_kept: np.ndarray  # ascending row indices: the top-k region and the minimum's region
    values: np.ndarray
    lo: float  # min over all rows of rows @ q
    hi: float  # max over all rows


class ScreenedRows:
    """A float64 matrix and its float32 copy, built once (e.g. per graph)."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = np.ascontiguousarray(rows, dtype=np.float64)
        self.rows32 = self.rows.astype(np.float32)
        n, d = self.rows.shape
        self.norm_max = float(np.linalg.norm(self.rows, axis=1).max()) if n else 0.0
        self.rel = 2.0 * (d + 3) * _U32 / (1.0 - d * _U32)

    def margin(self, q: np.ndarray) -> float:
        return self.rel * self.norm_max * float(np.linalg.norm(q))

    def block(self, queries: np.ndarray, k: int) -> list[Screened]:
        """For each query (row of the (b, d) array): the rows that can be among the k largest
        of `rows @ q` or be its minimum, their exact values, and the exact min and max."""
        qs = np.asarray(queries, dtype=np.float64)
        n = self.rows.shape[0]
        if n == 0:
            raise ValueError("no rows to screen")
        k = max(1, min(k, n))
        approx = self.rows32 @ qs.astype(np.float32).T  # (n, b)
        out = []
        for j, q in enumerate(qs):
            a, m = approx[:, j], self.margin(q)
            kth = np.partition(a, n - k)[n - k]
            # exact >= k-th exact - m  =>  approx >= k-th approx - 3m (see the module docstring)
            keep = np.flatnonzero((a >= kth - 3.0 * m) | (a <= a.min() + 2.0 * m))
            values = same_float_rows(self.rows, keep, q)
            out.append(Screened(keep, values, float(values.min()), float(values.max())))
        return out

    def sure(self, s: Screened, q: np.ndarray) -> bool:
        """Whether the screen decides the min-max ordering: the range is wide against the
        margin (min-max then keeps rows outside the top region strictly below it)."""
        return s.hi - s.lo > 1e3 * self.margin(q)
