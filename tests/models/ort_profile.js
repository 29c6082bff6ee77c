#!/usr/bin/env node
// Profiles ONNX Runtime (npm onnxruntime-node, graph optimization 'all') on
// one model with random float32 inputs and prints, per node in the order it
// first ran, the fastest and the median of its times after the first SKIP
// runs, as TSV: min_ms, median_ms, op, node (ORT names a fused node after
// its output). To set beside `etc inspect --format tsv` of the same model.
//
//   node tests/models/ort_profile.js MODEL.onnx THREADS RUNS SKIP NAME=1x3x224x224...
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));

(async () => {
  const [model, threads, runs, skip, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    enableProfiling: true,
    profileFilePrefix: path.join(dir, 'profile'),
  });
  const feeds = {};
  for (const spec of inputs) {
    const [name, dims] = spec.split('=');
    const shape = dims.split('x').map(Number);
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; ++i) data[i] = Math.random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  for (let i = 0; i < Number(runs); ++i) await session.run(feeds);
  session.endProfiling();
  const file = fs.readdirSync(dir).find(f => f.endsWith('.json'));
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  fs.rmSync(dir, {recursive: true, force: true});
  const times = new Map();
  const ops = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const node = e.name.slice(0, -'_kernel_time'.length);
    if (!times.has(node)) times.set(node, []);
    times.get(node).push(e.dur / 1000);
    ops.set(node, e.args.op_name);
  }
  console.log('min_ms\tmedian_ms\top\tnode');
  for (const [node, all] of times) {
    const kept = all.length > Number(skip) ? all.slice(Number(skip)) : all;
    console.log(`${Math.min(...kept).toFixed(3)}\t${median(kept).toFixed(3)}\t${ops.get(node)}\t${node}`);
  }
})().catch(e => {
  fs.rmSync(dir, {recursive: true, force: true});
  console.error(String(e));
  process.exit(1);
});
