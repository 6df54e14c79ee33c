'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c } = require('./helpers.js');
const { Tensor, MemoryFormat } = c10c;

function meta(t) {
  const m = { sizes: t.sizes, strides: t.strides, offset: t.storageOffset };
  t.dispose();
  return m;
}

test('metadata of a new tensor', () => {
  const t = Tensor.empty([2, 3, 4]);
  assert.deepEqual(t.sizes, [2, 3, 4]);
  assert.deepEqual(t.shape, [2, 3, 4]);
  assert.deepEqual(t.strides, [12, 4, 1]);
  assert.equal(t.storageOffset, 0);
  assert.equal(t.dim, 3);
  assert.equal(t.numel, 24);
  assert.equal(t.nbytes, 96);
  assert.equal(t.size(-1), 4);
  assert.equal(t.stride(0), 12);
  assert.ok(t.isContiguous());
  assert.throws(() => t.size(3), { status: 'C10C_STATUS_INDEX_OUT_OF_RANGE' });
  t.dispose();
  const s = Tensor.empty([]);
  assert.deepEqual(s.sizes, []);
  assert.equal(s.numel, 1);
  s.dispose();
});

test('every view the C API has', () => {
  const t = Tensor.empty([4, 6]);
  try {
    assert.deepEqual(meta(t.narrow(1, 2, 3)), { sizes: [4, 3], strides: [6, 1], offset: 2 });
    assert.deepEqual(meta(t.transpose(0, 1)), { sizes: [6, 4], strides: [1, 6], offset: 0 });
    assert.deepEqual(meta(t.select(0, 1)), { sizes: [6], strides: [1], offset: 6 });
    assert.deepEqual(meta(t.permute([1, 0])), { sizes: [6, 4], strides: [1, 6], offset: 0 });
    assert.deepEqual(meta(t.view([3, -1, 2])), { sizes: [3, 4, 2], strides: [8, 2, 1], offset: 0 });
    assert.deepEqual(meta(t.reshape([24])), { sizes: [24], strides: [1], offset: 0 });
    assert.deepEqual(meta(t.unsqueeze(1)), { sizes: [4, 1, 6], strides: [6, 6, 1], offset: 0 });
    assert.deepEqual(meta(t.slice(1, 1, 6, 2)), { sizes: [4, 3], strides: [6, 2], offset: 1 });
    assert.deepEqual(meta(t.slice(0, 1)), { sizes: [3, 6], strides: [6, 1], offset: 6 });
    assert.deepEqual(meta(t.asStrided([2, 2], [1, 3], 5)), { sizes: [2, 2], strides: [1, 3], offset: 5 });
    assert.deepEqual(meta(t.asStrided([2, 2], [1, 3])), { sizes: [2, 2], strides: [1, 3], offset: 0 });
    assert.deepEqual(meta(t.diagonal(1, 0, 1)), { sizes: [4], strides: [7], offset: 1 });
    assert.deepEqual(meta(t.unfold(1, 2, 2)), { sizes: [4, 3, 2], strides: [6, 2, 1], offset: 0 });
    assert.deepEqual(meta(t.flatten()), { sizes: [24], strides: [1], offset: 0 });
    assert.deepEqual(meta(t.unflatten(1, [2, 3])), { sizes: [4, 2, 3], strides: [6, 3, 1], offset: 0 });
    assert.deepEqual(meta(t.movedim(0, 1)), { sizes: [6, 4], strides: [1, 6], offset: 0 });
    assert.deepEqual(meta(t.viewDtype('int16')), { sizes: [4, 12], strides: [12, 1], offset: 0 });
    const u = t.unsqueeze(0).unsqueeze(2);
    assert.deepEqual(meta(u.squeeze()), { sizes: [4, 6], strides: [6, 1], offset: 0 });
    assert.deepEqual(meta(u.squeeze(0)), { sizes: [4, 1, 6], strides: [6, 6, 1], offset: 0 });
    u.dispose();
    const c = Tensor.empty([4, 1]);
    assert.deepEqual(meta(c.expand([4, 5])), { sizes: [4, 5], strides: [1, 0], offset: 0 });
    c.dispose();
    const tt = t.transpose(0, 1);
    assert.equal(tt.isContiguous(), false);
    const cc = tt.contiguous();
    assert.deepEqual(meta(cc), { sizes: [6, 4], strides: [4, 1], offset: 0 });
    const cl = tt.clone(MemoryFormat.CONTIGUOUS);
    assert.deepEqual(meta(cl), { sizes: [6, 4], strides: [4, 1], offset: 0 });
    tt.dispose();
  } finally {
    t.dispose();
  }
});

test('views share the storage; a view outlives its disposed base', () => {
  const t = Tensor.fromTypedArray(new Float32Array([0, 1, 2, 3, 4, 5]), [2, 3]);
  const v = t.transpose(0, 1);
  const s1 = t.storage(), s2 = v.storage();
  assert.equal(s1.dataPtr, s2.dataPtr);
  assert.equal(s1.nbytes, 24);
  s1.dispose(); s2.dispose();
  t.dispose();
  assert.deepEqual(v.toArray(), [0, 3, 1, 4, 2, 5]);
  v.dispose();
});

test('tensor factories: zeros, full, emptyStrided, fromStorage, likes', () => {
  const z = Tensor.zeros([2, 2], { dtype: 'int32' });
  assert.deepEqual(z.toArray(), [0, 0, 0, 0]);
  const f = Tensor.full([3], 2.5);
  assert.deepEqual(f.toArray(), [2.5, 2.5, 2.5]);
  const fl = f.fullLike(7, { dtype: 'int64' });
  assert.deepEqual(fl.toArray(), [7n, 7n, 7n]);
  const es = Tensor.emptyStrided([2, 3], [1, 2]);
  assert.deepEqual(es.strides, [1, 2]);
  const el = es.emptyLike();
  assert.deepEqual(el.strides, [1, 2]);
  const st = c10c.Storage.new(24);
  const fs = Tensor.fromStorage(st, [2, 2], [2, 1], 1, 'float32');
  assert.equal(fs.storageOffset, 1);
  assert.deepEqual(fs.sizes, [2, 2]);
  const r = f.retain();
  f.dispose();
  assert.deepEqual(r.toArray(), [2.5, 2.5, 2.5]);
  for (const t of [z, fl, es, el, fs, r, st]) t.dispose();
});
