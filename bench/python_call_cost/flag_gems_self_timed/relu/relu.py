# relu that times itself (device work included) and, from its 25th call in a process, raises
# with the figures: crucible's timing error then shows the kernel's own time per call.
import time
import torch
import flag_gems

_T = []


def relu_kernel_impl(x):
    t0 = time.perf_counter()
    y = flag_gems.ops.relu(x)
    torch.cuda.synchronize()
    _T.append((time.perf_counter() - t0) * 1e6)
    if len(_T) >= 25:
        s = sorted(_T[5:])
        raise RuntimeError("SELF %.1f us median (min %.1f, max %.1f, %d calls)"
                           % (s[len(s) // 2], s[0], s[-1], len(s)))
    return y
