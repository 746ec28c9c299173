"""Running an issue's script, contained, and judging what it did: the releases and device a triage runs, the failure's signature, whether it is a torch bug, the issue's standing and lifecycle."""
