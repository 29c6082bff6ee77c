#!/usr/bin/env node
// Runs a stateful model with ONNX Runtime (npm onnxruntime-node) over a
// stream of chunks, feeding an output back into an input after every run,
// as `etc run --chunks --feedback` does.
//
//   node tests/models/ort_stream.js reference OUT_DIR MODEL.onnx CHUNKED=CHUNKS.npy OUT=IN NAME=INPUT.npy...
//     writes OUT_DIR/<output>.npy: every run's output stacked on a new first axis
//   node tests/models/ort_stream.js bench THREADS MODEL.onnx CHUNKED=CHUNKS.npy OUT=IN NAME=INPUT.npy...
//     times each run over the stream, twice (the first pass warms up), and
//     prints JSON {"median_ms", "min_ms", "runs"}
// CHUNKS.npy stacks the chunked input's values on its first axis; OUT=IN
// names an output and the input it feeds (one pair); the rest are fixed inputs.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy, writeNpy} = require('./npy.js');

(async () => {
  const [mode, where, model, chunkSpec, feedback, ...inputs] = process.argv.slice(2);
  const options = {graphOptimizationLevel: 'all'};
  if (mode === 'bench') Object.assign(options, {intraOpNumThreads: Number(where), interOpNumThreads: 1});
  const session = await ort.InferenceSession.create(model, options);
  const [chunkName, chunkFile] = chunkSpec.split('=');
  const [outName, inName] = feedback.split('=');
  const chunks = readNpy(chunkFile);
  const initial = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    initial[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const count = chunks.dims[0];
  const size = chunks.data.length / count;
  const chunk = k => new ort.Tensor(chunks.type, chunks.data.slice(k * size, (k + 1) * size), chunks.dims.slice(1));
  // One pass over the stream; returns every run's outputs and times.
  const pass = async () => {
    const feeds = {...initial};
    const outputs = [], times = [];
    for (let k = 0; k < count; ++k) {
      feeds[chunkName] = chunk(k);
      const t0 = performance.now();
      const results = await session.run(feeds);
      times.push(performance.now() - t0);
      outputs.push(results);
      feeds[inName] = results[outName];
    }
    return {outputs, times};
  };
  if (mode === 'bench') {
    await pass();
    const {times} = await pass();
    const sorted = [...times].sort((a, b) => a - b);
    const m = sorted.length >> 1;
    const median = sorted.length % 2 ? sorted[m] : 0.5 * (sorted[m - 1] + sorted[m]);
    console.log(JSON.stringify({median_ms: median, min_ms: sorted[0], runs: count}));
    return;
  }
  const {outputs} = await pass();
  fs.mkdirSync(where, {recursive: true});
  for (const name of session.outputNames) {
    const runs = outputs.map(r => r[name]);
    const one = runs[0].data.length;
    const all = new runs[0].data.constructor(one * count);
    runs.forEach((t, k) => all.set(t.data, k * one));
    const file = path.join(where, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
    writeNpy(file, new ort.Tensor(runs[0].type, all, [count, ...runs[0].dims]));
    console.log(`wrote ${file}`);
  }
})().catch(e => { console.error(e.message || e); process.exit(1); });
