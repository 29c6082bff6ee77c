// .npy reading and writing for the ONNX Runtime reference scripts.
const fs = require('fs');
const ort = require('onnxruntime-node');

const DTYPES = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
                '|b1': ['bool', Uint8Array]};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const [type, Ctor] = DTYPES[descr];
  const data = buf.subarray(10 + headerLen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new Ctor(copy.buffer), shape);
}

function writeNpy(file, tensor) {
  const descr = {float32: '<f4', int64: '<i8', int32: '<i4', bool: '|b1'}[tensor.type];
  const dims = tensor.dims;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), data]));
}

module.exports = {readNpy, writeNpy};
