'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c, collect, live, waitLive } = require('./helpers.js');
const { Tensor, DLPackTensor, raw } = c10c;
const { koffi, types, constants } = c10c.ffi;

test('DLPack out: the export describes the tensor; dispose() calls the deleter once', async () => {
  await collect();
  const base = live();
  const t = Tensor.fromTypedArray(new Float32Array([0, 1, 2, 3, 4, 5]), [2, 3]);
  const dl = t.toDLPack();
  const s = dl.struct;
  assert.equal(s.version.major, constants.C10C_DLPACK_MAJOR);
  assert.equal(s.dl_tensor.ndim, 2);
  assert.deepEqual(s.dl_tensor.dtype, { code: 2, bits: 32, lanes: 1 });
  assert.equal(s.dl_tensor.device.device_type, 1); // kDLCPU
  assert.equal(dl.dataPtr, t.dataPtr);
  assert.deepEqual(dl.shape, [2, 3]);
  t.dispose();
  assert.equal(live(), base + 1, 'the export holds the tensor');
  dl.dispose();
  assert.equal(live(), base, 'the deleter released it');
  dl.dispose();
});

test('DLPack round trip: the import shares the data; the library calls the deleter', async () => {
  await collect();
  const base = live();
  const t = Tensor.fromTypedArray(new Int32Array([1, 2, 3, 4]), [2, 2]);
  const dl = t.toDLPack();
  const back = Tensor.fromDLPack(dl);
  assert.equal(dl.disposed, true, 'consumed');
  assert.equal(back.dataPtr, t.dataPtr);
  assert.deepEqual(back.toArray(), [1, 2, 3, 4]);
  back.data()[0] = 9;
  assert.deepEqual(t.toArray(), [9, 2, 3, 4]);
  t.dispose();
  back.dispose();
  assert.equal(await waitLive(base), base);
});

test('DLPack in: a struct made in JS, with a JS deleter called exactly once', () => {
  const OUT = [0n];
  const alloc = (n) => { assert.equal(raw.c10c_cpu_malloc(OUT, n), 0); return OUT[0]; };
  const data = alloc(6 * 8);
  new Float64Array(koffi.view(data, 48)).set([1, 2, 3, 4, 5, 6]);
  const shape = alloc(16);
  koffi.encode(shape, 'int64_t', [3, 2], 2);
  const mt = alloc(koffi.sizeof(types.DLManagedTensorVersioned));
  let calls = 0;
  const proto = koffi.proto('void test_dlpack_deleter(void *)');
  const deleter = koffi.register((p) => {
    calls++;
    assert.equal(p, mt);
    raw.c10c_cpu_free(data);
    raw.c10c_cpu_free(shape);
    raw.c10c_cpu_free(mt);
  }, koffi.pointer(proto));
  koffi.encode(mt, types.DLManagedTensorVersioned, {
    version: { major: 1, minor: 0 },
    manager_ctx: null,
    deleter: deleter,
    flags: 0,
    dl_tensor: {
      data, device: { device_type: 1, device_id: 0 }, ndim: 2,
      dtype: { code: 2, bits: 64, lanes: 1 }, shape, strides: null, byte_offset: 0,
    },
  });
  const t = Tensor.fromDLPack(DLPackTensor.fromRawOwned(mt));
  assert.deepEqual(t.sizes, [3, 2]);
  assert.deepEqual(t.strides, [2, 1]);
  assert.equal(t.dataPtr, data);
  assert.deepEqual(t.toArray(), [1, 2, 3, 4, 5, 6]);
  const v = t.transpose(0, 1);
  t.dispose();
  assert.equal(calls, 0);
  v.dispose();
  assert.equal(calls, 1);
  koffi.unregister(deleter);
});

test('a refused import leaves the struct to the caller', () => {
  const m = Tensor.empty([2], { device: 'meta' });
  assert.throws(() => m.toDLPack(), { status: 'C10C_STATUS_UNSUPPORTED', message: 'Cannot pack tensors on meta' });
  m.dispose();
  const t = Tensor.empty([2]);
  const dl = t.toDLPack();
  // A major version the library refuses: the struct stays ours.
  koffi.encode(dl.raw, 'uint32_t', 2);
  assert.throws(() => Tensor.fromDLPack(dl), { status: 'C10C_STATUS_UNSUPPORTED' });
  assert.equal(dl.disposed, false);
  koffi.encode(dl.raw, 'uint32_t', 1);
  dl.dispose();
  t.dispose();
});
