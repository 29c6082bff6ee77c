#!/usr/bin/env node
// Runs a model with ONNX Runtime (npm onnxruntime-node) on .npy inputs and writes
// each output as OUT_DIR/<output name>.npy: the reference etc is compared with.
//
//   node tests/models/ort_reference.js MODEL.onnx OUT_DIR NAME=INPUT.npy...
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const {readNpy, writeNpy} = require('./npy.js');

(async () => {
  const [model, outDir, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  for (const name of session.outputNames) {
    const file = path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
    writeNpy(file, results[name]);
    console.log(`wrote ${file}`);
  }
})().catch(e => { console.error(e.message || e); process.exit(1); });
