"""What a run printed, as text a report can hold: tracebacks and their frames, fenced blocks, logs as the user would see them, the standalone script, a case's history in one line."""
