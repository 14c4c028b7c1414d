# What an ATen and a FlagGems call cost in a plain PyTorch process (no crucible), per op:
# (1) host+device time of one call, synchronised, as crucible's timed region measures it;
# (2) triton.testing.do_bench (the L2 cleared before each call; what FlagGems' own benchmarks and
# BackendBench report); (3) device time alone: the call queued behind a 5 ms busy kernel, so
# the host's work is hidden and the events see only the GPU's.
import statistics, time, torch, triton
import flag_gems

torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"

def sync_wall(fn, n=60):
    for _ in range(5): fn()
    ts = []
    for _ in range(n):
        torch.cuda.synchronize(); t = time.perf_counter(); fn(); torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e6)
    return statistics.median(ts)

def device_only(fn, n=30):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        torch.cuda._sleep(10_000_000)  # about 5 ms of GPU time: the host runs ahead
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)

x16 = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
y16 = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
s16 = torch.randn(1024, 192, device=dev, dtype=torch.float16)
m = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
cases = [
    ("abs [4096,4096] f16", lambda: torch.abs(x16)),
    ("relu [1024,192] f16", lambda: torch.relu(s16)),
    ("add [4096,4096] f16", lambda: torch.add(x16, y16)),
    ("exp [4096,4096] f16", lambda: torch.exp(x16)),
    ("sum dim1 [4096,4096] f16", lambda: torch.sum(x16, 1)),
    ("mm [4096,4096] bf16", lambda: torch.mm(m, m)),
]
for name, fn in cases:
    with flag_gems.use_gems():
        for _ in range(3): fn()
    aten_row = (sync_wall(fn), triton.testing.do_bench(fn, warmup=25, rep=100) * 1e3, device_only(fn))
    with flag_gems.use_gems():
        gems_row = (sync_wall(fn), triton.testing.do_bench(fn, warmup=25, rep=100) * 1e3, device_only(fn))
    print("%-26s aten: sync %7.1f  do_bench %7.1f  device %7.1f | flag_gems: sync %7.1f  do_bench %7.1f  device %7.1f us"
          % ((name,) + aten_row + gems_row), flush=True)

# The steps of crucible's Python bridge on CUDA tensors, one at a time (median us of 200).
from torch.utils import dlpack as _dl
def med(fn, n=200):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e6)
    return statistics.median(ts)
caps = []
def mk():
    caps.append(_dl.to_dlpack(s16))
print("to_dlpack %.1f us" % med(mk))
def fr():
    _dl.from_dlpack(caps.pop())
print("from_dlpack (capsule, cuda) %.1f us" % med(fr))
out = torch.empty_like(s16)
r = torch.relu(s16)
print("copy_ [1024,192] f16 (host side, no sync) %.1f us" % med(lambda: out.copy_(r)))
print("torch.relu launch (host side, no sync) %.1f us" % med(lambda: torch.relu(s16)))
with flag_gems.use_gems():
    print("flag_gems relu launch (host side, no sync) %.1f us" % med(lambda: torch.relu(s16)))
    print("flag_gems abs launch [4096,4096] (host side, no sync) %.1f us" % med(lambda: torch.abs(x16)))
print("torch.cuda.synchronize idle %.1f us" % med(torch.cuda.synchronize))
print("torch.get_num_threads %.2f us" % med(torch.get_num_threads))
