"""Alpha of a small coder-by-unit matrix with its bootstrap interval, through the agreement package's
own functions (one computation of alpha in the project: ``agreement.alpha``)."""

from __future__ import annotations

import numpy as np

from ..agreement.alpha import compute_alpha, distance_matrix, pairable
from ..agreement.bootstrap import bootstrap_alpha
from ..agreement.fields import Measure

RESAMPLES = 400


def _r(x, digits: int = 4):
    return None if x is None else round(float(x), digits)


def encode(values: list[list], measure: Measure) -> tuple[np.ndarray, list]:
    """Coders' values (rows: coders, columns: units; None missing) as codes into a sorted domain."""
    domain = sorted({v for row in values for v in row if v is not None}, key=lambda v: (str(type(v)), v))
    pos = {v: i for i, v in enumerate(domain)}
    codes = np.asarray([[-1 if v is None else pos[v] for v in row] for row in values], dtype=np.int64).reshape(
        len(values), -1
    )
    if measure.every_coder and codes.size:
        codes = codes[:, (codes >= 0).all(axis=0)]
    return codes, domain


def alpha_figure(codes: np.ndarray, domain: list, level: str, *, seed: int = 0, interval: bool = True) -> dict:
    """{"alpha", "interval", "units", "reason"}: alpha of ``codes`` at ``level`` and its 95% bootstrap interval."""
    if codes.size == 0 or codes.shape[0] < 2:
        return {"alpha": None, "interval": None, "units": 0, "reason": "fewer than two coders"}
    data = pairable(codes, len(domain))
    delta = distance_matrix(level, domain)[np.ix_(data.present, data.present)] if data.units else np.zeros((0, 0))
    result = compute_alpha(data, delta, str(domain[data.present[0]]) if data.units else "")
    out = {"alpha": _r(result.alpha), "interval": None, "units": data.units, "reason": result.reason}
    if interval and result.alpha is not None and data.pairs:
        dist = bootstrap_alpha(
            data.o,
            delta,
            pairs=data.pairs,
            resamples=RESAMPLES,
            rng=np.random.default_rng(seed),
            expected_d=result.expected_disagreement,
            cells=data.nonzero(),
        )
        out["interval"] = [_r(x) for x in dist.interval()]
    return out


def matching(codes: np.ndarray) -> dict:
    """Rows where the first two coders both have a value, and the share where the values are the same."""
    both = (codes[0] >= 0) & (codes[1] >= 0)
    n = int(both.sum())
    same = int((codes[0][both] == codes[1][both]).sum())
    return {"rows": n, "same": same, "share": _r(same / n) if n else None}
