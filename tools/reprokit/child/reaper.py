"""How a run's keeper (contain.py) ends: every process left below it killed and reaped, and the case's way of ending
(its exit code, or death by its signal) passed on as its own. Standard library only; loaded by path, like contain.py."""

import os
import signal
import sys


def descendants(root):
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parent_of[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        frontier = [pid for pid, ppid in parent_of.items() if ppid in frontier]
        found += frontier
    return found


def end_all_below():
    """Kill and reap every process left below this one (a subreaper: orphans of the run are its children)."""
    me = os.getpid()
    while True:
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            return


def relay(status):
    """Exit as the case did: the same code, or death by the same signal (without a core of this process)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.WIFSIGNALED(status):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset (EINVAL)
            try:
                signal.signal(number, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            except (OSError, ValueError):
                pass
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal that does not end a process by default
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def wait_for(pid):
    """Wait for pid, reaping whatever else ends meanwhile (orphans re-parented here); its wait status."""
    while True:
        try:
            ended, status = os.wait()
        except ChildProcessError:
            return 9  # killed from outside
        if ended == pid:
            return status
