"""reprokit: run the torch.compile / distributed repro corpus on a hardware target and publish what happens."""

__version__ = "0.1.0"
