'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { c10c } = require('./helpers.js');
const { ffi } = c10c;

const API = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'abi', 'api.json'), 'utf8'));

test('lib/ffi.js declares every function of api.json, and koffi accepts each', () => {
  const names = API.functions.map((f) => f.name);
  assert.equal(Object.keys(ffi.prototypes).length + Object.keys(ffi.undeclarable).length, names.length);
  const h = ffi.open(c10c.LIBRARY_PATH);
  assert.equal(h.declareAll(), names.length);
  for (const n of names) assert.equal(typeof h.fn[n], 'function', n);
});

test('every struct, enum value and constant is there', () => {
  for (const s of API.structs) assert.ok(ffi.types[s.name], s.name);
  for (const e of API.enums) for (const [k, v] of Object.entries(e.values)) assert.equal(ffi.constants[k], v, k);
  for (const [k, v] of Object.entries(API.constants)) assert.equal(ffi.constants[k], v, k);
  for (const o of API.opaque_types) assert.ok(ffi.types[o], o);
  for (const t of API.typedefs) assert.ok(ffi.types[t.name], t.name);
});

test('struct layouts match the library (c10c_abi_check)', () => {
  const { koffi, types, constants } = ffi;
  const info = {
    struct_size: koffi.sizeof(types.c10c_abi_info), abi_version: constants.C10C_ABI_VERSION,
    sizeof_device: koffi.sizeof(types.c10c_device), sizeof_stream: koffi.sizeof(types.c10c_stream),
    sizeof_stream_data3: koffi.sizeof(types.c10c_stream_data3),
    sizeof_dispatch_key_set: koffi.sizeof(types.c10c_dispatch_key_set), sizeof_data_ptr: koffi.sizeof(types.c10c_data_ptr),
  };
  assert.equal(c10c.raw.c10c_abi_check(info), 0);
  assert.equal(koffi.sizeof(types.DLManagedTensorVersioned), 80);
  assert.equal(koffi.sizeof(types.DLTensor), 48);
  assert.equal(c10c.version(), `${constants.C10C_VERSION_MAJOR}.${constants.C10C_VERSION_MINOR}.${constants.C10C_VERSION_PATCH}`);
});

test('out parameters work through the generated declarations', () => {
  const { raw } = c10c;
  const out = [0];
  assert.equal(raw.c10c_promote_types(out, c10c.DType.INT32, c10c.DType.FLOAT32), 0);
  assert.equal(out[0], c10c.DType.FLOAT32);
  const len = [0];
  const buf = Buffer.alloc(64);
  assert.equal(raw.c10c_device_to_string(buf, buf.length, { type: 1, index: 3 }), 0);
  assert.equal(buf.toString('utf8', 0, buf.indexOf(0)), 'cuda:3');
  void len;
});

test('loading stays fast (lazy declarations)', () => {
  const { execFileSync } = require('node:child_process');
  const ms = Number(execFileSync(process.execPath, ['-e',
    "const t=process.hrtime.bigint(); require(process.argv[1]); console.log(Number(process.hrtime.bigint()-t)/1e6)",
    path.resolve(__dirname, '..', 'lib', 'index.js')], { env: process.env }).toString());
  assert.ok(ms < 500, `require took ${ms} ms`);
});

test('every declared function is in the public headers (include/c10c)', () => {
  const inc = process.env.C10C_INCLUDE || path.resolve(__dirname, '..', '..', '..', 'include');
  const dir = path.join(inc, 'c10c');
  const text = fs.readdirSync(dir).filter((f) => f.endsWith('.h')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  for (const n of Object.keys(ffi.prototypes)) assert.match(text, new RegExp(`\\b${n}\\s*\\(`), n);
});
