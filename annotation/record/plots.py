"""The dashboard's drift plot per coder, in the agreement plots' style (``agreement.plots``: matplotlib's
object API, self-contained SVG, fixed hash salt), drawn by the worker and stored with the report."""

from __future__ import annotations

from matplotlib import rc_context
from matplotlib.figure import Figure

from ..agreement.plots import RC, THRESHOLDS, _svg, _text, data_uri

COLOURS = {"utterance_type": "#1f5f99", "relation_pattern": "#c0601a", "strategy_type": "#3b8a3e"}


def drift_chart(coder: str, weeks: list[dict], fields: list[dict]) -> str | None:
    """Four panels over the weeks of the study: alpha with the others and with the gold (95% intervals),
    the share of draft rows kept unchanged, and rows per hour of work. A data URI, or None without weeks."""
    mine = [(w["week"], w["coders"][coder]) for w in weeks if coder in w["coders"]]
    if not mine:
        return None
    labels = {f["key"]: f["label"] for f in fields}
    with rc_context(RC):
        fig = Figure(figsize=(9, 5.2), layout="constrained")
        axes = fig.subplots(2, 2, sharex=True)
        for ax, which, title in (
            (axes[0][0], "with_others", "alpha of all coders on this coder's rows"),
            (axes[0][1], "with_gold", "alpha with the adjudicated gold"),
        ):
            for key, colour in COLOURS.items():
                xs, ys, lo, hi = [], [], [], []
                for week, data in mine:
                    fig_ = (data["fields"].get(key) or {}).get(which) or {}
                    if fig_.get("alpha") is None:
                        continue
                    xs.append(week)
                    ys.append(fig_["alpha"])
                    interval = fig_.get("interval") or [fig_["alpha"], fig_["alpha"]]
                    lo.append(fig_["alpha"] - interval[0])
                    hi.append(interval[1] - fig_["alpha"])
                if xs:
                    ax.errorbar(
                        xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=colour, label=_text(labels.get(key, key))
                    )
            for t, _name in THRESHOLDS:
                ax.axhline(t, color="#999", linewidth=0.6, linestyle="--")
            ax.set_ylim(-0.2, 1.05)
            ax.set_title(_text(title))
            ax.set_ylabel("alpha")
        if axes[0][0].get_legend_handles_labels()[0]:  # weeks without any figure have no line to name
            axes[0][0].legend(loc="lower left", fontsize=7)
        weeks_x = [w for w, _ in mine]
        share = [d.get("unchanged_share") for _, d in mine]
        axes[1][0].plot(
            [w for w, s in zip(weeks_x, share) if s is not None],
            [s for s in share if s is not None],
            marker="o",
            color="#555",
        )
        axes[1][0].set_ylim(0, 1.05)
        axes[1][0].set_title("share of draft rows kept unchanged")
        rate = [d.get("rows_per_hour") for _, d in mine]
        if any(r is not None for r in rate):
            axes[1][1].bar(
                [w for w, r in zip(weeks_x, rate) if r is not None], [r for r in rate if r is not None], color="#1f5f99"
            )
        else:  # no timed saves (e.g. imported work): say so rather than draw an empty axis that reads as zero
            axes[1][1].text(
                0.5,
                0.5,
                "not measured: no timed saves",
                ha="center",
                va="center",
                transform=axes[1][1].transAxes,
                color="#666",
            )
            axes[1][1].set_yticks([])
        axes[1][1].set_title("rows per hour of work")
        for ax in axes[1]:
            ax.set_xlabel("week of the study")
            ax.set_xticks(weeks_x)
        fig.suptitle(_text(f"{coder}: week by week"))
        return data_uri(_svg(fig))
