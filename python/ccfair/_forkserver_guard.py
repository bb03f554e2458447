"""Imported first by the sweep pool's fork server (executors._FORKSERVER_PRELOAD), and only there:
the fork server gets SIGKILL when the sweep's main process dies (Linux prctl(PR_SET_PDEATHSIG),
prctl(2)), even while it is still importing its preload modules, which on a busy host takes
seconds. (Once running it also exits when its pipe from the main process closes; the children it
forks do not inherit the setting: they watch the main process themselves, executors._exit_with.)

The main process's PID comes in the environment variable ``executors.FORKSERVER_PARENT_ENV``, set
by ``executors._forkserver`` only while it starts the server; without it this does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal

from ccfair.executors import FORKSERVER_PARENT_ENV

_PR_SET_PDEATHSIG = 1


def _guard() -> None:
    parent = os.environ.get(FORKSERVER_PARENT_ENV)
    if not parent or not parent.isdigit():
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != int(parent):  # the main process died before the request
        os._exit(1)


_guard()
