#!/usr/bin/env node
// Runs a stateful model with ONNX Runtime (npm onnxruntime-node) over a
// stream of chunks, feeding an output back into an input after every run,
// as `etc run --chunks --feedback` does. Writes OUT_DIR/<output>.npy with
// every run's output stacked on a new first axis.
//
//   node tests/models/ort_stream_reference.js MODEL.onnx OUT_DIR CHUNKED=CHUNKS.npy OUT=IN NAME=INPUT.npy...
// CHUNKS.npy stacks the chunked input's values on its first axis; OUT=IN
// names an output and the input it feeds (one pair); the rest are fixed inputs.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy, writeNpy} = require('./npy.js');

(async () => {
  const [model, outDir, chunkSpec, feedback, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all'});
  const [chunkName, chunkFile] = chunkSpec.split('=');
  const [outName, inName] = feedback.split('=');
  const chunks = readNpy(chunkFile);
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const count = chunks.dims[0];
  const size = chunks.data.length / count;
  const stacked = {};
  for (let k = 0; k < count; ++k) {
    feeds[chunkName] = new ort.Tensor(chunks.type, chunks.data.slice(k * size, (k + 1) * size), chunks.dims.slice(1));
    const results = await session.run(feeds);
    for (const name of session.outputNames) (stacked[name] = stacked[name] || []).push(results[name]);
    feeds[inName] = results[outName];
  }
  fs.mkdirSync(outDir, {recursive: true});
  for (const name of session.outputNames) {
    const runs = stacked[name];
    const one = runs[0].data.length;
    const all = new runs[0].data.constructor(one * count);
    runs.forEach((t, k) => all.set(t.data, k * one));
    const file = path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
    writeNpy(file, new ort.Tensor(runs[0].type, all, [count, ...runs[0].dims]));
    console.log(`wrote ${file}`);
  }
})().catch(e => { console.error(e.message || e); process.exit(1); });
