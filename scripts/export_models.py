#!/usr/bin/env python3
"""Exports the model graphs crucible ships in data/models/ (needs PyTorch, transformers, torchvision).

Every model is exported forward and training, in a tiny configuration (for tests: seconds on
`ref`) and with the published model's configuration and shapes (for runs). Weights are random
(seeded); the graphs carry shapes and initialisers, not trained weights.

    python3 scripts/export_models.py --out data/models [--size tiny|full|all] [--only gpt2,bert]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_graph import export_graph  # noqa: E402


def eager_attention(cfg):
    """The attention written out in ATen ops (softmax(QK^T)V), as the graphs should show it."""
    for attr in ("_attn_implementation", "attn_implementation"):
        try:
            setattr(cfg, attr, "eager")
        except (AttributeError, ValueError):
            pass


def seq_inputs(vocab, batch, seq, gen):
    return torch.randint(0, vocab, (batch, seq), generator=gen)


def gpt2(size, gen):
    from transformers import GPT2Config, GPT2LMHeadModel

    if size == "tiny":
        cfg = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=96, n_positions=32)
        b, s = 2, 8
    else:
        cfg = GPT2Config()  # gpt2 (124M): 12 layers, 768 wide, 12 heads, vocab 50257
        b, s = 1, 128
    cfg.resid_pdrop = cfg.embd_pdrop = cfg.attn_pdrop = 0.0
    cfg.use_cache = False
    eager_attention(cfg)
    m = GPT2LMHeadModel(cfg)
    return m, (seq_inputs(cfg.vocab_size, b, s, gen),), f"transformers GPT2LMHeadModel {size}"


def bert(size, gen):
    from transformers import BertConfig, BertForMaskedLM

    if size == "tiny":
        cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, vocab_size=96, max_position_embeddings=32)
        b, s = 2, 8
    else:
        cfg = BertConfig()  # bert-base-uncased
        b, s = 1, 128
    cfg.hidden_dropout_prob = cfg.attention_probs_dropout_prob = 0.0
    eager_attention(cfg)
    m = BertForMaskedLM(cfg)
    return m, (seq_inputs(cfg.vocab_size, b, s, gen),), f"transformers BertForMaskedLM {size}"


def llama(size, gen):
    from transformers import LlamaConfig, LlamaForCausalLM

    if size == "tiny":
        cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, vocab_size=96,
                          max_position_embeddings=32)
        b, s = 2, 8
    else:  # Llama-3.2-1B's shapes
        cfg = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                          num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                          max_position_embeddings=131072, rope_theta=500000.0,
                          tie_word_embeddings=True)
        b, s = 1, 128
    cfg.use_cache = False
    eager_attention(cfg)
    m = LlamaForCausalLM(cfg)
    return m, (seq_inputs(cfg.vocab_size, b, s, gen),), f"transformers LlamaForCausalLM {size}"


class T5Wrapper(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, decoder_input_ids):
        return self.m(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits


def t5(size, gen):
    from transformers import T5Config, T5ForConditionalGeneration

    if size == "tiny":
        cfg = T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                       num_heads=4, vocab_size=96, relative_attention_num_buckets=8)
        b, s = 2, 8
    else:
        cfg = T5Config()  # t5-small
        b, s = 1, 128
    cfg.dropout_rate = 0.0
    cfg.use_cache = False
    eager_attention(cfg)
    m = T5Wrapper(T5ForConditionalGeneration(cfg))
    ids = seq_inputs(cfg.vocab_size, b, s, gen)
    dec = seq_inputs(cfg.vocab_size, b, s, gen)
    return m, (ids, dec), f"transformers T5ForConditionalGeneration {size}"


def vit(size, gen):
    from transformers import ViTConfig, ViTForImageClassification

    if size == "tiny":
        cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, image_size=32, patch_size=8, num_labels=10)
        b = 2
    else:
        cfg = ViTConfig(num_labels=1000)  # vit-base-patch16-224
        b = 1
    cfg.hidden_dropout_prob = cfg.attention_probs_dropout_prob = 0.0
    eager_attention(cfg)
    m = ViTForImageClassification(cfg)
    x = torch.randn(b, 3, cfg.image_size, cfg.image_size, generator=gen)
    return m, (x,), f"transformers ViTForImageClassification {size}"


def resnet50(size, gen):
    import torchvision

    if size == "tiny":
        # ResNet's bottleneck blocks, shrunk: one block per stage, 8 base channels.
        from torchvision.models.resnet import Bottleneck, ResNet

        # 64 x 64 inputs: the last stage's batch norm then normalises 2 x 2 x 2 values per
        # channel (at 32 x 32 it would see 2, an ill-conditioned variance no f32 kernel matches).
        m = ResNet(Bottleneck, [1, 1, 1, 1], num_classes=10, width_per_group=8)
        x = torch.randn(2, 3, 64, 64, generator=gen)
    else:
        m = torchvision.models.resnet50()
        x = torch.randn(1, 3, 224, 224, generator=gen)
    return m, (x,), f"torchvision resnet50 {size}"


def mobilenet_v3(size, gen):
    import torchvision

    if size == "tiny":
        m = torchvision.models.mobilenet_v3_small(num_classes=10, width_mult=0.25)
        x = torch.randn(2, 3, 32, 32, generator=gen)
    else:
        m = torchvision.models.mobilenet_v3_large()
        x = torch.randn(1, 3, 224, 224, generator=gen)
    for mod in m.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
    return m, (x,), f"torchvision mobilenet_v3_{'small' if size == 'tiny' else 'large'} {size}"


def swin(size, gen):
    """Shifted windows: roll, window partitions, relative position bias gathers, pads."""
    from torchvision.models.swin_transformer import SwinTransformer

    if size == "tiny":
        m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                            window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10)
        x = torch.randn(2, 3, 32, 32, generator=gen)
    else:
        # swin_t's configuration, without stochastic depth (random in training).
        m = SwinTransformer(patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2],
                            num_heads=[3, 6, 12, 24], window_size=[7, 7],
                            stochastic_depth_prob=0.0)
        x = torch.randn(1, 3, 224, 224, generator=gen)
    return m, (x,), f"torchvision swin_t {size}"


MODELS = {
    "gpt2": gpt2,
    "bert": bert,
    "llama": llama,
    "t5": t5,
    "vit": vit,
    "resnet50": resnet50,
    "mobilenet_v3": mobilenet_v3,
    "swin": swin,
}


def write_io(model, inputs, graph_path, path):
    """The example inputs (by graph input name) and PyTorch's outputs (output0, ...) of a forward
    graph, so crucible's execution of the graph can be checked against PyTorch's own."""
    from export_graph import arg_names_of, write_safetensors, _tensors_of

    model.eval()
    with torch.no_grad():
        outs = _tensors_of(model(*inputs))
    names = arg_names_of(model, len(inputs))
    tensors = {n: x for n, x in zip(names, inputs)}
    tensors.update({f"output{i}": o for i, o in enumerate(outs)})
    write_safetensors(path, tensors)


def record_traces(a):
    """One training step of each model in eager mode, recorded as a trace (record_trace.py)."""
    from record_trace import record

    os.makedirs(a.traces, exist_ok=True)
    names = [n for n in MODELS if not a.only or n in a.only.split(",")]
    sizes = ["tiny", "full"] if a.size == "all" else [a.size]
    dt = getattr(torch, a.dtype)
    failed = 0
    for name in names:
        for size in sizes:
            torch.manual_seed(0)
            gen = torch.Generator().manual_seed(0)
            model, inputs, _ = MODELS[name](size, gen)
            model = model.to(a.device, dtype=dt)
            inputs = tuple(x.to(a.device, dtype=dt) if x.is_floating_point() else x.to(a.device)
                           for x in inputs)
            if hasattr(model, "config"):
                model.config._attn_implementation = "sdpa"
            stem = f"{name}-{size}-{a.device}-{a.dtype}_training"
            try:
                record(model, inputs, training=True).write(os.path.join(a.traces, stem + ".txt"))
                print(f"{stem}: recorded", flush=True)
            except Exception:
                failed += 1
                print(f"{stem}: FAILED", flush=True)
                traceback.print_exc()
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--size", choices=["tiny", "full", "all"], default="all")
    p.add_argument("--kind", choices=["forward", "training", "all"], default="all")
    p.add_argument("--only", default="")
    p.add_argument("--weights-for", default="",
                   help="models (comma-separated) whose tiny forward graph also gets its weights as safetensors")
    p.add_argument("--traces", default="", help="also record eager-mode operator traces into this folder")
    p.add_argument("--device", default="cpu", help="the device traces are recorded on (cpu, cuda)")
    p.add_argument("--dtype", default="float32", help="the dtype traces are recorded in")
    a = p.parse_args()
    if a.traces:
        return record_traces(a)
    os.makedirs(a.out, exist_ok=True)
    names = [n for n in MODELS if not a.only or n in a.only.split(",")]
    sizes = ["tiny", "full"] if a.size == "all" else [a.size]
    kinds = ["forward", "training"] if a.kind == "all" else [a.kind]
    failed = 0
    all_ops = set()
    for name in names:
        for size in sizes:
            for kind in kinds:
                torch.manual_seed(0)
                gen = torch.Generator().manual_seed(0)
                model, inputs, source = MODELS[name](size, gen)
                stem = f"{name}-{size}-{'train' if kind == 'training' else 'fwd'}"
                path = os.path.join(a.out, stem + ".graph")
                t0 = time.time()
                try:
                    weights = None
                    if size == "tiny" and kind == "forward" and name in a.weights_for.split(","):
                        weights = os.path.join(a.out, stem + ".safetensors")
                    ops = export_graph(model, inputs, path, kind=kind, name=stem, weights=weights,
                                       source=f"{source}, torch {torch.__version__}")
                    all_ops |= ops
                    if weights:
                        write_io(model, inputs, path, os.path.join(a.out, stem + ".io.safetensors"))
                    print(f"{stem}: {len(ops)} ops, {time.time() - t0:.1f} s", flush=True)
                except Exception:
                    failed += 1
                    print(f"{stem}: FAILED", flush=True)
                    traceback.print_exc()
    with open(os.path.join(a.out, "ops-used.txt"), "w") as f:
        f.write("\n".join(sorted(all_ops)) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
