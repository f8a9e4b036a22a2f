"""torch_reference.py: re-measures the PyTorch reference figures that kgate's
replication study (docs/replication.md) compares against, on the GPU at hand.

Each figure is a CUDA graph replayed many times and timed with events:
- cuBLAS bf16 A.B^T with f32 output (A[M,K], B[N,K]) at pack 8: 8 matmuls per
  graph, time per matmul;
- torch ops per node in 100-node graphs: layernorm bf16 128x1024, rmsnorm f16
  32x4096, softmax f16 32x512 and 1024x512, row sum f16 129x2048, bf16
  128x8192, f32 3x8192; an empty kernel node.
Prints one line per figure: name, median microseconds per operation.

  python3 tools/torch_reference.py [--replays 200]
"""
import argparse
import statistics

import torch


def time_graph(fn, per_graph, replays, warmup=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(per_graph):
            fn()
    for _ in range(warmup):
        g.replay()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(replays):
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0 / per_graph)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replays", type=int, default=200)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for (m, n, k) in [(96, 512, 2048), (256, 512, 2048), (256, 1024, 2048)]:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        out = torch.empty(m, n, device=dev, dtype=torch.float32)

        def mm():
            # bf16 inputs, f32 output: cuBLAS(Lt) through torch's out_dtype matmul
            torch.mm(a, b.t(), out_dtype=torch.float32, out=out)

        try:
            t = time_graph(mm, 8, args.replays)
        except (TypeError, RuntimeError):
            def mm2():
                torch.matmul(a.float(), b.float().t(), out=out)
            t = time_graph(mm2, 8, args.replays)
            print("note: out_dtype matmul unavailable; timed the f32 matmul instead")
        print(f"cublas_bf16_f32out {m}x{n}x{k} pack8 {t:.3f} us")

    def node(name, fn):
        print(f"{name} {time_graph(fn, 100, args.replays):.3f} us/node")

    x = torch.randn(128, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    bb = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    node("layernorm_bf16_128x1024", lambda: torch.nn.functional.layer_norm(x, (1024,), w, bb, 1e-5))
    x2 = torch.randn(32, 4096, device=dev, dtype=torch.float16)
    w2 = torch.randn(4096, device=dev, dtype=torch.float16)
    node("rmsnorm_f16_32x4096", lambda: torch.nn.functional.rms_norm(x2, (4096,), w2, 1e-5))
    for r in (32, 1024):
        xs = torch.randn(r, 512, device=dev, dtype=torch.float16)
        node(f"softmax_f16_{r}x512", lambda xs=xs: torch.softmax(xs, dim=-1))
    for (r, c, dt) in [(129, 2048, torch.float16), (128, 8192, torch.bfloat16), (3, 8192, torch.float32)]:
        xr = torch.randn(r, c, device=dev, dtype=dt)
        node(f"rowsum_{str(dt).split('.')[-1]}_{r}x{c}", lambda xr=xr: xr.sum(dim=-1))
    e = torch.empty(1, device=dev)
    node("empty_kernel_node", lambda: e.zero_())


if __name__ == "__main__":
    main()
