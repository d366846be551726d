#!/usr/bin/python3
"""Writes the data cases of POST /transformer/encoder and
/transformer/decoder (tests/cases/transformer_encoder,
tests/cases/transformer_decoder; the format of tests/cases/README.md),
each answer computed by PyTorch (Debian's python3-torch, float64):
nn.TransformerEncoder / nn.TransformerDecoder with dropout 0 and
batch_first=True, autograd for the gradients, and the trace recomputed
step by step with the layers' own modules (tests/torch/transformer.py's
reference_trace). The other case directories are gen_cases.py's and
gen_grade_kserve.py's; this script writes only these two.

The cases hold PyTorch's masks, a trace and grad_output, so that
grade_own_answers.py grades every kind of member these routes answer
(the state_dicts' and the trace's literal keys among them). PyTorch and
attnd sum in different orders: the cases allow atol = rtol = 1e-12.

  usage: /usr/bin/python3 tests/cases/gen_transformer_cases.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "torch"))
from casefile import CaseSet  # noqa: E402
import transformer as tx  # noqa: E402  (tests/torch/transformer.py)
import torch  # noqa: E402


def r4(t):
    """Inputs rounded to 4 decimals, so the request is the same numbers."""
    return torch.round(t * 1e4) / 1e4


def nulls(x):
    """Nested lists with NaN (masked trace entries) as null."""
    if isinstance(x, list):
        return [nulls(y) for y in x]
    return None if x != x else x


def case(decoder, L, norm_first, B, masks, causal, seed):
    E, H, F, S, Tn = 4, 2, 3, 3, 2
    N = Tn if decoder else S
    model = tx.build(decoder, E, H, F, L, norm_first, "relu", seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(r4(p))
    g = torch.Generator().manual_seed(seed)
    x = r4(torch.randn(B, N, E, generator=g))
    mem = r4(torch.randn(B, S, E, generator=g)) if decoder else None
    gout = r4(torch.randn(B, N, E, generator=g))
    sm, skpm, cm, ckpm = masks
    is_causal = decoder if causal is None else causal
    body = {("tgt" if decoder else "src"): x.tolist()}
    if decoder:
        body["memory"] = mem.tolist()
    body.update({"num_heads": H, "num_layers": L, "norm_first": norm_first,
                 "state_dict": {k: v.tolist()
                                for k, v in model.state_dict().items()}})
    names = (("tgt_mask", "memory_mask", "tgt_key_padding_mask",
              "memory_key_padding_mask") if decoder else
             ("src_mask", None, "src_key_padding_mask", None))
    for name, t in zip(names, (sm, cm, skpm, ckpm)):
        if t is not None:
            body[name] = tx.wire(t)
    if causal is not None:
        body["causal"] = causal
    body["grad_output"] = gout.tolist()
    body["trace"] = True
    # PyTorch: the model, autograd, the weights, the trace
    xs = x.clone().requires_grad_()
    ms = mem.clone().requires_grad_() if decoder else None
    mask = tx.with_causal(sm, N) if is_causal else sm
    if decoder:
        out = model(xs, ms, tgt_mask=mask, memory_mask=cm,
                    tgt_key_padding_mask=skpm, memory_key_padding_mask=ckpm)
    else:
        out = model(xs, mask=mask, src_key_padding_mask=skpm)
    (out * gout).sum().backward()
    self_add = tx.additive(sm, skpm, is_causal, B, H, N, N)
    cross_add = tx.additive(cm, ckpm, False, B, H, N, S)
    with torch.no_grad():
        ref, order, _ = tx.reference_trace(model, x, mem, self_add, decoder,
                                           norm_first, "relu", cross_add)
    answer = {"output": out.tolist()}
    if decoder:
        answer["self_weights"] = ref["self_attention.weights"].tolist()
        answer["cross_weights"] = ref["cross_attention.weights"].tolist()
        answer["grads"] = {"tgt": xs.grad.tolist(), "memory": ms.grad.tolist()}
    else:
        answer["weights"] = ref["self_attention.weights"].tolist()
        answer["grads"] = {"src": xs.grad.tolist()}
    answer["grads"]["state_dict"] = {k: p.grad.tolist()
                                     for k, p in model.named_parameters()}
    trace = {"input": x.tolist()}
    for name in order:
        trace[name] = nulls(ref[name].tolist())
    answer["trace"] = trace
    return body, {"status": 200, "body": answer, "atol": 1e-12,
                  "rtol": 1e-12}


def main():
    cs = CaseSet({"transformer_encoder": "POST /transformer/encoder",
                  "transformer_decoder": "POST /transformer/decoder"})
    hide = torch.tensor([[False, True, False], [False, False, True],
                         [False, False, False]])
    kpm = torch.tensor([[False, False, False], [False, False, True]])
    body, expected = case(False, 2, False, 2, (hide, kpm, None, None),
                          None, 11)
    cs.add("transformer_encoder", "src_mask_key_padding_trace_grads",
           expected, body=body)
    tgt_mask = torch.tensor([[[0.0, -0.5], [0.25, 0.0]],
                             [[0.0, float("-inf")], [-1.0, 0.5]]])
    mkpm = torch.tensor([[False, True, False]])
    body, expected = case(True, 1, True, 1,
                          (tgt_mask, None, None, mkpm), None, 12)
    cs.add("transformer_decoder", "per_head_tgt_mask_memory_padding_trace",
           expected, body=body)
    cs.write(sys.argv[1] if len(sys.argv) > 1 else HERE)
    print("%d cases" % cs.count())


if __name__ == "__main__":
    main()
