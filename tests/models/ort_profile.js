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
const {sessionOptions, randomFeeds, median} = require('./ort_timing.js');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));

(async () => {
  const [model, threads, runs, skip, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(
      model, sessionOptions(threads, {enableProfiling: true, profileFilePrefix: path.join(dir, 'profile')}));
  const feeds = randomFeeds(inputs);
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
