"""Fix: find the specializing line with the dynamic-shape log (TORCH_LOGS="+dynamic", as the error suggests; here
torch._logging.set_logs(dynamic=logging.INFO)).

Every guard Dynamo adds is logged as "eval <expr> [guard added]" with the user source line that added it, so
the Eq(s, 5) guard that specialized the dim is traced to `if x.size(0) == 5` whether or not the
ConstraintViolationError itself names the line. The script captures the log and exits 0 only when the guard record
names that line.
"""
import logging
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    if x.size(0) == 5:  # the specialization the error should point at
        return x * 2
    return x + 1


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


torch._logging.set_logs(dynamic=logging.INFO)
capture = Capture()
logging.getLogger("torch.fx.experimental.symbolic_shapes").addHandler(capture)

x = torch.randn(5, device=device, dtype=dtype)
torch._dynamo.mark_dynamic(x, 0)
try:
    torch.compile(f)(x)
except Exception as err:
    print("compile refused the specialization:", type(err).__name__)
guards = [line for line in capture.lines if "[guard added]" in line and "x.size(0) == 5" in line]
assert guards, "no [guard added] record names the specializing line:\n" + "\n".join(capture.lines[-20:])
print("the dynamic-shape log names the specializing guard:", guards[0][:160])
