#!/usr/bin/python3
"""A seeded synthetic document image for the OCR models: a light page with
dark text-like strokes and noise, normalised as PaddleOCR's detectors and
recognisers expect (ImageNet mean and deviation). Random noise alone would
make the detector's output all but zero everywhere, where a relative
comparison says nothing.

    /usr/bin/python3 tests/models/make_document_input.py OUT.npy HEIGHT WIDTH [SEED]
"""
import sys

import numpy as np


def document(height, width, seed):
    rng = np.random.default_rng(seed)
    page = np.full((height, width), 0.92, np.float32)
    for _ in range(max(1, height * width // 10000)):
        y = rng.integers(0, max(1, height - 12))
        x = rng.integers(0, max(1, width - 60))
        for k in range(0, int(rng.integers(20, 120)), 6):
            h, w = rng.integers(6, 11), rng.integers(2, 4)
            page[y:y + h, x + k:min(width, x + k + w)] = rng.uniform(0.05, 0.25)
    page += rng.normal(0, 0.02, page.shape).astype(np.float32)
    image = np.stack([page] * 3)[None].clip(0, 1)
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((image - mean) / std).astype(np.float32)


if __name__ == "__main__":
    out, height, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    np.save(out, document(height, width, seed))
