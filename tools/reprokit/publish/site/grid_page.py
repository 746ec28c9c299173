"""A target's grid page: its cases x torch releases, the devices its current records were made on, its rates per
release with their trend, and the filters (the verdict on any release)."""

from __future__ import annotations

import jinja2

from reprokit.publish.render import Published
from reprokit.publish.site.grid import Grid
from reprokit.publish.site.machines import recorded_on
from reprokit.publish.site.standing import release_rates, steps, trend


def grid_page(env: jinja2.Environment, common: dict, p: Published, grid: Grid, changed: list) -> str:
    """A target's grid, its rates per release with their trend, and the filters: the verdict on any release."""
    filters = [
        ("category", "category", sorted({r.category for r in grid.rows})),
        ("source", "source", sorted({r.source for r in grid.rows})),
        ("verdict", "verdict", grid.verdicts),
    ]
    rates = release_rates(p.histories[grid.target], p.cases)
    between = steps(p.histories[grid.target], p.cases)
    return env.get_template("grid.html.j2").render(
        **common,
        grid=grid,
        filters=filters,
        hardware=p.descriptions.get(grid.target, ""),
        recorded_on=recorded_on(p.views.get(grid.target)),
        history_rows=sum(r.history for r in grid.rows),
        changes_files={rc.release: rc.file for rc in changed},
        rates=rates,
        trend=trend(rates),
        steps=between,
        sets_differ=any(s.only_before or s.only_after for s in between.values()),
        several_dtypes=any(len(c.lines) > 1 for r in grid.rows for c in r.cells if c),
    )
