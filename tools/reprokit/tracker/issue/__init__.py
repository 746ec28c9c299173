"""Reading a pytorch/pytorch issue: its JSON, its thread, what its script's exit status says, the release it most likely ran, and searching the tracker for issues that know a failure."""
