"""The Markdown reports under reports/ (per target, sweeps, history, the index with the claims ledger), the CI artifacts (JUnit, badges) and the run summary, with their table and cell helpers."""
