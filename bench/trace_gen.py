"""Synthetic allocation traces of a transformer training step.

Writes CSV in RMM's replay-log layout with extra columns, ``Thread,Time,Action,Pointer,Size,
Stream,Step,Tag,Phase``, that ``bench/replay_trace.c`` replays (RMM's own parser ignores the
extra columns). Time is a logical tick: one per allocator call on the compute stream; the
communication stream's all-reduces take ``COMM_TICKS``.

Variants: ``static`` (identical steps), ``varlen`` (sequence length drawn per step from
512..2048 in steps of 64), ``noflash`` (attention scores, softmax and dropout mask of s x s
kept), ``ckpt`` (activation checkpointing: only layer inputs kept, the rest recomputed in the
backward pass), ``multistream`` (25 MB gradient buckets used on a communication stream through
record_stream), ``inference`` (forward only, a growing KV cache per layer).

    python bench/trace_gen.py static out.csv [--layers 12] [--steps 8] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

VARIANTS = ("static", "varlen", "noflash", "ckpt", "multistream", "inference")
COMM_TICKS = 120  # an all-reduce of one bucket, in compute-stream ticks (6 per ~1300-tick step)
BUCKET = 25_000_000  # DDP's default bucket


@dataclass
class Model:
    """T-small (GPT-2 small) unless told otherwise."""

    layers: int = 12
    hidden: int = 768
    heads: int = 12
    seq: int = 1024
    batch: int = 8
    vocab: int = 50257


@dataclass
class Trace:
    """Rows of the CSV and the ids of live allocations."""

    rows: list[str] = field(default_factory=list)
    time: int = 0
    next_id: int = 0x1000
    step: int = 0
    phase: str = "init"

    def _row(self, action: str, pointer: int, size: int, stream: int, tag: str) -> None:
        self.rows.append(
            f"0,{self.time},{action},{pointer:#x},{size},{stream},{self.step},{tag},{self.phase}"
        )

    def alloc(self, size: int, tag: str, stream: int = 0) -> int:
        """Allocates size bytes; returns the allocation's id."""
        self.time += 1
        pointer = self.next_id
        self.next_id += 16
        self._row("allocate", pointer, size, stream, tag)
        return pointer

    def free(self, pointer: int, stream: int = 0) -> None:
        """Frees an allocation."""
        self.time += 1
        self._row("free", pointer, 0, stream, "")

    def record_stream(self, pointer: int, stream: int) -> None:
        """Marks an allocation as used on another stream."""
        self._row("record_stream", pointer, 0, stream, "")

    def enqueue(self, stream: int, ticks: int) -> None:
        """Queues ticks of work on a stream."""
        self._row("enqueue", 0, ticks, stream, "")

    def begin_step(self, step: int) -> None:
        """Marks the start of a training step."""
        self.step = step
        self._row("step_begin", 0, 0, 0, "")


def layer_params(m: Model) -> list[int]:
    """fp32 parameter bytes of one layer: LN, QKV, projection, LN, MLP (weights and biases)."""
    h = m.hidden
    ln = [4 * h, 4 * h]
    attention = [12 * h * h, 12 * h, 4 * h * h, 4 * h]
    mlp = [16 * h * h, 16 * h, 16 * h * h, 4 * h]
    return ln + attention + ln + mlp


def all_params(m: Model) -> list[int]:
    """Every parameter tensor's bytes (fp32): embeddings, layers, final LN."""
    h = m.hidden
    sizes = [4 * m.vocab * h, 4 * m.seq * h]
    for _ in range(m.layers):
        sizes += layer_params(m)
    return [*sizes, 4 * h, 4 * h]


def forward_layer(t: Trace, m: Model, s: int, variant: str, keep: bool) -> list[int]:
    """One layer's forward allocations; returns the tensors saved for backward."""
    b, h, a = m.batch, m.hidden, m.heads
    sbh = s * b * h
    saved: list[int] = []

    def save(size: int, tag: str) -> int:
        p = t.alloc(size, tag)
        if keep:
            saved.append(p)
        return p

    def temp(size: int, tag: str) -> int:
        return t.alloc(size, tag)

    ln1 = save(2 * sbh, "act_saved")
    stats = [save(4 * b * s, "act_saved"), save(4 * b * s, "act_saved")]
    qkv = save(6 * sbh, "act_saved")
    if variant == "noflash":
        scores = save(2 * b * a * s * s, "act_saved")
        probs = save(2 * b * a * s * s, "act_saved")
        mask = save(b * a * s * s, "act_saved")
        attn_tmp = [scores, probs, mask]
    else:
        attn_tmp = [save(4 * b * a * s, "act_saved")]  # flash attention's logsumexp
    attn = save(2 * sbh, "act_saved")
    proj = temp(2 * sbh, "act_tmp")
    drop1 = save(sbh, "act_saved")
    resid1 = save(2 * sbh, "act_saved")
    t.free(proj)
    ln2 = save(2 * sbh, "act_saved")
    stats += [save(4 * b * s, "act_saved"), save(4 * b * s, "act_saved")]
    fc1 = save(8 * sbh, "act_saved")
    gelu = save(8 * sbh, "act_saved")
    fc2 = temp(2 * sbh, "act_tmp")
    drop2 = save(sbh, "act_saved")
    t.free(fc2)
    if not keep:  # inference / recomputation: nothing outlives the layer but its output
        for p in [ln1, *stats, qkv, *attn_tmp, attn, drop1, resid1, ln2, fc1, gelu, drop2]:
            t.free(p)
    return saved


def backward_layer(
    t: Trace, m: Model, s: int, saved: list[int], grads: list[int] | None, *, bucket: bool
) -> None:
    """One layer's backward: activation gradients, parameter gradients, saved tensors freed."""
    b, h = m.batch, m.hidden
    sbh = s * b * h
    g_out = t.alloc(2 * sbh, "grad_act")
    g_fc = t.alloc(8 * sbh, "grad_act")
    g_gelu = t.alloc(8 * sbh, "grad_act")
    t.free(g_fc)
    if grads is not None:
        grads += [t.alloc(size, "grad") for size in layer_params(m)]
    g_attn = t.alloc(2 * sbh, "grad_act")
    t.free(g_gelu)
    g_qkv = t.alloc(6 * sbh, "grad_act")
    t.free(g_attn)
    for p in reversed(saved):
        t.free(p)
    t.free(g_qkv)
    t.free(g_out)
    if bucket:  # DDP: a gradient bucket all-reduced on the communication stream
        p = t.alloc(BUCKET, "comm_bucket")
        t.record_stream(p, 1)
        t.enqueue(1, COMM_TICKS)
        t.free(p)


def training_step(t: Trace, m: Model, s: int, variant: str, states: list[int]) -> None:
    """Forward, loss, backward and AdamW (foreach) for one step."""
    b = m.batch
    ckpt = variant == "ckpt"
    t.phase = "fwd"
    layers: list[list[int]] = []
    inputs: list[int] = []
    for _ in range(m.layers):
        if ckpt:
            inputs.append(t.alloc(2 * s * b * m.hidden, "act_saved"))
        layers.append(forward_layer(t, m, s, variant, keep=not ckpt))
    logits = t.alloc(2 * b * s * m.vocab, "logits")
    logits32 = t.alloc(4 * b * s * m.vocab, "logits")
    loss = t.alloc(4, "scalar")
    t.phase = "bwd"
    grad_logits = t.alloc(2 * b * s * m.vocab, "logits")
    t.free(logits32)
    t.free(logits)
    grads: list[int] = []
    for i in reversed(range(m.layers)):
        saved = forward_layer(t, m, s, variant, keep=True) if ckpt else layers[i]
        bucket = variant == "multistream" and i % 2 == 0
        backward_layer(t, m, s, saved, grads, bucket=bucket)
        if ckpt:
            t.free(inputs[i])
    t.free(grad_logits)
    t.free(loss)
    for size in all_params(m)[:2]:
        grads.append(t.alloc(size, "grad"))
    t.phase = "optim"
    sizes = all_params(m)
    if not states:  # AdamW m and v, allocated at the first step
        states += [t.alloc(size, "optim_state") for size in sizes for _ in range(2)]
    for chunk in range(0, len(sizes), 24):  # foreach kernels over groups of tensors
        temps = [t.alloc(size, "optim_tmp") for size in sizes[chunk : chunk + 24]]
        norm = t.alloc(4, "scalar")
        for p in temps:
            t.free(p)
        t.free(norm)
    for p in grads:  # zero_grad(set_to_none=True)
        t.free(p)


def inference_step(t: Trace, m: Model, context: int, caches: list[int]) -> None:
    """One decoding step: the KV cache of every layer grows by one token (a new, larger buffer
    and the old one freed, as torch.cat does), small activations for the new token."""
    b, h = m.batch, m.hidden
    t.phase = "fwd"
    for i in range(m.layers):
        x = t.alloc(2 * b * h, "act_tmp")
        qkv = t.alloc(6 * b * h, "act_tmp")
        new_cache = t.alloc(2 * 2 * b * context * h, "kv_cache")
        if len(caches) > i:
            t.free(caches[i])
            caches[i] = new_cache
        else:
            caches.append(new_cache)
        scores = t.alloc(4 * b * m.heads * context, "act_tmp")
        mlp = t.alloc(8 * b * h, "act_tmp")
        for p in (x, qkv, scores, mlp):
            t.free(p)
    logits = t.alloc(4 * b * m.vocab, "logits")
    token = t.alloc(8 * b, "scalar")
    t.free(logits)
    t.free(token)


def generate(variant: str, model: Model, steps: int, seed: int) -> Trace:
    """The trace of `steps` steps of a variant."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    rng = random.Random(seed)
    t = Trace()
    params = [t.alloc(size, "param") for size in all_params(model)]
    states: list[int] = []
    caches: list[int] = []
    prompt = model.seq
    for step in range(steps):
        t.begin_step(step)
        if variant == "inference":
            for token in range(16):  # 16 decoding steps per "step"
                inference_step(t, model, prompt + step * 16 + token, caches)
            continue
        s = model.seq if variant != "varlen" else 64 * rng.randint(8, 32)
        training_step(t, model, s, variant, states)
    for p in params + states + caches:
        t.free(p)
    return t


def write(trace: Trace, path: str) -> None:
    """Writes the CSV with its header."""
    with open(path, "w") as f:
        f.write("Thread,Time,Action,Pointer,Size,Stream,Step,Tag,Phase\n")
        f.write("\n".join(trace.rows))
        f.write("\n")


def main() -> None:
    """Command line: variant, output path, model size and step count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write(generate(args.variant, Model(layers=args.layers), args.steps, args.seed), args.out)


if __name__ == "__main__":
    main()
