"""ONNX Runtime backend for the sentence encoder, exported from the LOCAL model files.

Why: on a 2-core CPU the transformer forward pass is most of a cold graph build (tens of
thousands of entity names, facts and descriptions). ONNX Runtime runs the same fp32 graph
faster than eager torch, and its dynamic int8 quantisation (opt-in, `onnx-int8`) faster still
on CPUs with VNNI. sentence-transformers' own `backend="onnx"` needs `optimum`, which pins an
older `transformers`; this module needs only `onnxruntime` (+ `onnx` for quantisation).

The model is exported once with `torch.onnx.export` from the packaged safetensors (no hub
access) into `<cache>/models/onnx/<key>/`, written atomically. Pooling (mean over the attention
mask) and L2 normalisation are done here in numpy, as all-MiniLM-L6-v2's modules.json says;
any other pooling is refused rather than silently approximated.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.text_bounds import cut_for_tokenizer

log = logging.getLogger(__name__)

BACKENDS = ("torch", "torch-bf16", "onnx", "onnx-int8", "onnx-opt", "onnx-opt-int8")
EXPORT_VERSION = 1  # bump when the export changes the graph (model.onnx, model.int8.onnx)
# the fused exports (onnx-opt, onnx-opt-int8) are separate files with their own version, so a
# change to them never invalidates the plain exports or the caches built with them
OPT_EXPORT_VERSION = 1


def _model_files_hash(model_dir: Path) -> str:
    h = hashlib.sha256(f"export{EXPORT_VERSION}".encode())
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        f = model_dir / name
        if f.exists():
            st = f.stat()
            h.update(f"{name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def check_mean_pooling(model_dir: Path) -> None:
    """Refuse models whose sentence embedding is not mean pooling + normalisation."""
    cfg = model_dir / "1_Pooling" / "config.json"
    if not cfg.exists():
        raise HopbenchError(
            f"{model_dir}: no 1_Pooling/config.json; the onnx backend supports "
            "sentence-transformers models with mean pooling only"
        )
    pooling = json.loads(cfg.read_text())
    if not pooling.get("pooling_mode_mean_tokens") or any(
        pooling.get(k)
        for k in (
            "pooling_mode_cls_token",
            "pooling_mode_max_tokens",
            "pooling_mode_mean_sqrt_len_tokens",
        )
    ):
        raise HopbenchError(f"{cfg}: the onnx backend supports mean pooling only, got {pooling}")


def export_onnx(model_dir: Path, cache_dir: Path, int8: bool = False, fused: bool = False) -> Path:
    """Path of the (cached) ONNX export of `model_dir`; int8 = dynamically quantised weights;
    fused = ORT's transformer optimizer applied (see `export_fused`)."""
    folder = Path(cache_dir) / "models" / "onnx" / _model_files_hash(model_dir)
    if fused:
        return export_fused(model_dir, folder, int8=int8)
    fp32 = folder / "model.onnx"
    if not fp32.exists():
        _export(model_dir, fp32)
    if not int8:
        return fp32
    q = folder / "model.int8.onnx"
    if not q.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".q-"))
        try:
            quantize_dynamic(str(fp32), str(tmp / "model.int8.onnx"), weight_type=QuantType.QInt8)
            os.replace(tmp / "model.int8.onnx", q)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return q


def _atomic_write(out: Path, write) -> None:
    """`write(tmp_path)` into a private temp folder next to `out`, then rename into place."""
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".tmp-"))
    try:
        write(tmp / out.name)
        os.replace(tmp / out.name, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def export_fused(model_dir: Path, folder: Path, int8: bool = False) -> Path:
    """The BERT graph with ORT's transformer fusions (EmbedLayerNormalization, Attention,
    SkipLayerNormalization, BiasGelu): fewer, larger kernels, same arithmetic in fp32.

    int8: dynamic quantisation of the weights of the fused Attention (Q/K/V projections) and
    of every MatMul (attention output, FFN), PER OUTPUT CHANNEL; the embedding tables stay
    fp32 (quantising them saves no time). Per-channel scales are what keeps the cosine to torch
    at ~0.99 mean / >= 0.97 min on 2Wiki names, facts and descriptions; per-tensor scales (the
    plain `onnx-int8`, fused or not) give ~0.96 mean / 0.87 min (benchmarks/speed/results/kg_build.md).
    """
    v = OPT_EXPORT_VERSION
    folder.mkdir(parents=True, exist_ok=True)
    eager = folder / f"model.eager.v{v}.onnx"
    fused = folder / f"model.opt.v{v}.onnx"
    q = folder / f"model.opt.int8.v{v}.onnx"
    if not eager.exists():
        # eager attention: the SDPA export of newer transformers hides the pattern the
        # optimizer fuses into Attention (it would fuse only LayerNorm/Gelu)
        _export(model_dir, eager, attn_implementation="eager")
    if not fused.exists():
        from onnxruntime.transformers.optimizer import optimize_model

        cfg = json.loads((model_dir / "config.json").read_text())
        opt = optimize_model(
            str(eager),
            model_type="bert",
            num_heads=int(cfg["num_attention_heads"]),
            hidden_size=int(cfg["hidden_size"]),
            opt_level=1,
        )
        stats = opt.get_fused_operator_statistics()
        if not stats.get("Attention"):
            raise HopbenchError(
                f"{eager}: ORT's optimizer fused no Attention ({stats}); "
                "the onnx-opt backends need a BERT-style graph"
            )
        _atomic_write(fused, lambda path: opt.save_model_to_file(str(path)))
    if not int8:
        return fused
    if not q.exists():
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # DefaultTensorType: shape inference cannot type the outputs of the contrib (fused) ops
        _atomic_write(
            q,
            lambda path: quantize_dynamic(
                str(fused),
                str(path),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul", "Attention"],
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            ),
        )
    return q


def _export(model_dir: Path, out: Path, attn_implementation: str | None = None) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    log.info("exporting %s to ONNX at %s (once)", model_dir, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    bert = AutoModel.from_pretrained(str(model_dir), **kwargs).eval()

    class Wrapped(
        torch.nn.Module
    ):  # keyword call: the positional signature differs across versions
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = Wrapped()
    sample = tok(["an example sentence", "two"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".export-"))
    try:
        with torch.no_grad():
            torch.onnx.export(
                model,
                tuple(sample[n] for n in names),
                str(tmp / "model.onnx"),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + ["last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp / "model.onnx", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class OnnxSentenceModel:
    """Tokenise, run the ONNX graph, mean-pool, L2-normalise: sentence-transformers' encode."""

    def __init__(
        self,
        model_dir: str | Path,
        cache_dir: str | Path,
        int8: bool = False,
        max_seq_length: int | None = None,
        threads: int | None = None,
        fused: bool = False,
    ):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        model_dir = Path(model_dir)
        check_mean_pooling(model_dir)
        self.path = export_onnx(model_dir, Path(cache_dir), int8=int8, fused=fused)
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        st_cfg = model_dir / "sentence_bert_config.json"
        default_len = (
            json.loads(st_cfg.read_text()).get("max_seq_length", 256) if st_cfg.exists() else 256
        )
        self.max_seq_length = int(max_seq_length or default_len)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads or os.cpu_count() or 1)
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(self.path), opts, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: bool = False,
        desc: str = "embedding",
    ) -> np.ndarray:
        """Texts are tokenised once, then run in batches of (almost) equal token count."""
        from tqdm import tqdm

        from hopbench.embed.batching import length_sorted_batches, lengths_of

        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # cut first: a fast tokenizer tokenises the whole text even with truncation=True
        cut = cut_for_tokenizer(texts, self.max_seq_length)
        enc = self.tokenizer(cut, truncation=True, max_length=self.max_seq_length, padding=False)
        ids, types = enc["input_ids"], enc.get("token_type_ids")
        lengths = lengths_of(ids)
        batches = list(length_sorted_batches(lengths, batch_size))
        pad_id = int(self.tokenizer.pad_token_id or 0)
        for idx in tqdm(batches, desc=desc, unit="batch", disable=not progress):
            width = int(lengths[idx].max())
            input_ids = np.full((len(idx), width), pad_id, dtype=np.int64)
            token_types = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = lengths[i]
                input_ids[row, :n] = ids[i]
                mask[row, :n] = 1
                if types is not None:
                    token_types[row, :n] = types[i]
            feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
        return out
