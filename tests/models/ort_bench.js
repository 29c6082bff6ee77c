#!/usr/bin/env node
// Times ONNX Runtime (npm onnxruntime-node, graph optimization 'all') on one
// model with random float32 inputs, and prints JSON:
//   {"create_ms", "first_run_ms", "median_ms", "min_ms", "iterations"}
// create_ms + first_run_ms is the cold start after the process is up.
//
//   node tests/models/ort_bench.js MODEL.onnx THREADS ITERATIONS WARMUP NAME=1x3x224x224...
const ort = require('onnxruntime-node');
const {sessionOptions, randomFeeds, median} = require('./ort_timing.js');

(async () => {
  const [model, threads, iterations, warmup, ...inputs] = process.argv.slice(2);
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, sessionOptions(threads));
  const t1 = performance.now();
  const feeds = randomFeeds(inputs);
  await session.run(feeds);
  const t2 = performance.now();
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(iterations); ++i) {
    const s = performance.now();
    await session.run(feeds);
    times.push(performance.now() - s);
  }
  console.log(JSON.stringify({
    create_ms: t1 - t0,
    first_run_ms: t2 - t1,
    median_ms: median(times),
    min_ms: Math.min(...times),
    iterations: times.length,
  }));
})().catch(e => {
  console.error(String(e));
  process.exit(1);
});
