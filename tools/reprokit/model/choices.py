"""The fixed choices and defaults the command line's parsers show (`--category`, `--area`, triage's `--timeout` and
the gh fields its help names), in a module that imports nothing: `reprokit --help` builds every sub-command's parser,
and reading these from the modules that validate with them (schema.py, case.py, tracker/triage.py) imported pydantic,
jinja2 and the whole tracker for a help text. Those modules take them from here, so each is still written once."""

CATEGORIES = (
    "dynamic-shape",
    "custom-op",
    "dtensor",
    "fusion",
    "graph-partition",
    "type-inference",
    "memory-lifecycle",
    "backend-fallback",
    "ddp",
    "fsdp",
    "amp",
    "refactor",
    "compile-options",
    "diagnosis",
    "model-sweep",
)

# The subsystem an upstream issue is about (finer than category, which the reports group by).
AREAS = (
    "graph-break",
    "guards-recompile",
    "dynamic-shape",
    "custom-op",
    "fake-tensor",
    "aot-autograd",
    "inductor-cpu",
    "inductor-cuda",
    "export",
    "ddp",
    "fsdp",
    "dtensor",
    "autocast",
    "hang",
)

# What `gh issue view N --json ...` must print for triage to read an issue.
GH_FIELDS = "number,title,body,author,state,stateReason,closedAt,createdAt,labels,comments,url"
TRIAGE_TIMEOUT = (
    600.0  # seconds per run of an issue's script: a busy 2-core machine took over 300 s for runs that finish
)
