"""The compatibility site: one module per page or part of one (grid, case pages, changes, feed, compare, machines), built by website.py from the Published store view."""
