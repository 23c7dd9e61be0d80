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

from hopbench.errors import HopbenchError

log = logging.getLogger(__name__)

BACKENDS = ("torch", "torch-bf16", "onnx", "onnx-int8")
EXPORT_VERSION = 1  # bump when the export changes the graph


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
        raise HopbenchError(f"{model_dir}: no 1_Pooling/config.json; the onnx backend supports "
                            "sentence-transformers models with mean pooling only")
    pooling = json.loads(cfg.read_text())
    if not pooling.get("pooling_mode_mean_tokens") or any(
            pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                     "pooling_mode_mean_sqrt_len_tokens")):
        raise HopbenchError(f"{cfg}: the onnx backend supports mean pooling only, got {pooling}")


def export_onnx(model_dir: Path, cache_dir: Path, int8: bool = False) -> Path:
    """Path of the (cached) ONNX export of `model_dir`; int8 = dynamically quantised weights."""
    folder = Path(cache_dir) / "models" / "onnx" / _model_files_hash(model_dir)
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


def _export(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    log.info("exporting %s to ONNX at %s (once)", model_dir, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    bert = AutoModel.from_pretrained(str(model_dir)).eval()

    class Wrapped(torch.nn.Module):  # keyword call: the positional signature differs across versions
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    model = Wrapped()
    sample = tok(["an example sentence", "two"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".export-"))
    try:
        with torch.no_grad():
            torch.onnx.export(model, tuple(sample[n] for n in names), str(tmp / "model.onnx"),
                              input_names=names, output_names=["last_hidden_state"],
                              dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + ["last_hidden_state"]},
                              opset_version=17, dynamo=False)
        os.replace(tmp / "model.onnx", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class OnnxSentenceModel:
    """Tokenise, run the ONNX graph, mean-pool, L2-normalise: sentence-transformers' encode."""

    def __init__(self, model_dir: str | Path, cache_dir: str | Path, int8: bool = False,
                 max_seq_length: int | None = None, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        model_dir = Path(model_dir)
        check_mean_pooling(model_dir)
        self.path = export_onnx(model_dir, Path(cache_dir), int8=int8)
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        st_cfg = model_dir / "sentence_bert_config.json"
        default_len = json.loads(st_cfg.read_text()).get("max_seq_length", 256) if st_cfg.exists() else 256
        self.max_seq_length = int(max_seq_length or default_len)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads or os.cpu_count() or 1)
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # longest first, as sentence-transformers does: batches of similar length pad little
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=self.max_seq_length, return_tensors="np")
            feed = {k: enc[k].astype(np.int64) for k in enc if k in self.inputs}
            hidden = self.session.run(None, feed)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
        return out
