// What tests/models/ort_bench.js and ort_profile.js share: the session
// options the benchmarks compare etc against, random float32 inputs from
// NAME=1x3x224x224 specs, and the median.
const ort = require('onnxruntime-node');

// ONNX Runtime as the benchmarks run it: graph optimization 'all', THREADS
// intra-op threads, one inter-op thread, sequential execution.
function sessionOptions(threads, extra = {}) {
  return {
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    ...extra,
  };
}

// One float32 tensor of uniform values in [-1, 1) per NAME=DxDxD spec.
function randomFeeds(specs) {
  const feeds = {};
  for (const spec of specs) {
    const [name, dims] = spec.split('=');
    const shape = dims.split('x').map(Number);
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; ++i) data[i] = Math.random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

module.exports = {sessionOptions, randomFeeds, median};
