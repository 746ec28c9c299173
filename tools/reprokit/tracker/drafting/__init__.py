"""Writing what the tracker reads: bug reports in PyTorch's form, comments on linked issues, their fields and facts, the minifier's output and the trace bundle."""
