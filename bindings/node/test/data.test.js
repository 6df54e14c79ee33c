'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c, collect, live, waitLive } = require('./helpers.js');
const { Tensor, DType } = c10c;

test('fromTypedArray copies and data() is a zero-copy view', () => {
  const src = new Float32Array([1, 2, 3, 4, 5, 6]);
  const t = Tensor.fromTypedArray(src, [2, 3]);
  src[0] = 100; // a copy was made
  const d = t.data();
  assert.ok(d instanceof Float32Array);
  assert.deepEqual(Array.from(d), [1, 2, 3, 4, 5, 6]);
  t.dispose();
});

test('writes through the view are seen by the library, and the library\'s by the view', () => {
  const t = Tensor.empty([2, 3], { dtype: DType.INT32 });
  const d = t.data();
  assert.ok(d instanceof Int32Array);
  for (let i = 0; i < 6; i++) d[i] = 10 * i;
  t.bumpVersion();
  assert.equal(t.version, 1);
  // The library reads them: a contiguous copy of the transposed view.
  const c = t.transpose(0, 1).contiguous();
  assert.deepEqual(c.toArray(), [0, 30, 10, 40, 20, 50]);
  c.dispose();
  // And fills them: seen through the same view, without a copy.
  t.fill_(7);
  assert.deepEqual(Array.from(d), [7, 7, 7, 7, 7, 7]);
  t.zero_();
  assert.deepEqual(Array.from(d), [0, 0, 0, 0, 0, 0]);
  // A view's buffer starts at its first element.
  const row = t.select(0, 1);
  row.data()[0] = 99;
  assert.equal(d[3], 99);
  row.dispose();
  // copy_ writes too.
  const o = Tensor.fromTypedArray(new Int32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  t.copy_(o);
  assert.deepEqual(Array.from(d), [1, 2, 3, 4, 5, 6]);
  o.dispose();
  t.dispose();
});

test('the buffer keeps the memory alive after dispose(), until it is collected', async () => {
  await collect();
  const base = live();
  let d = (() => {
    const t = Tensor.fromTypedArray(new Float64Array([1.5, 2.5]));
    const view = t.data();
    t.dispose();
    return view;
  })();
  assert.equal(live(), base + 1);
  assert.deepEqual(Array.from(d), [1.5, 2.5]);
  d[1] = 3; // still valid memory
  assert.equal(d[1], 3);
  d = null;
  assert.equal(await waitLive(base), base);
});

test('dtypes map to TypedArrays; empty tensors give empty buffers', () => {
  const cases = [['int8', Int8Array], ['uint8', Uint8Array], ['int16', Int16Array], ['int64', BigInt64Array], ['float64', Float64Array], ['bool', Uint8Array]];
  for (const [dt, T] of cases) {
    const t = Tensor.zeros([3], { dtype: dt });
    assert.ok(t.data() instanceof T, dt);
    assert.equal(t.data().length, 3);
    t.dispose();
  }
  const e = Tensor.empty([0, 4]);
  assert.equal(e.buffer().byteLength, 0);
  assert.deepEqual(e.toArray(), []);
  e.dispose();
});

test('storage buffers are zero-copy too', () => {
  const t = Tensor.fromTypedArray(new Uint8Array([1, 2, 3, 4]));
  const s = t.storage();
  const b = new Uint8Array(s.buffer());
  b[2] = 42;
  assert.deepEqual(t.toArray(), [1, 2, 42, 4]);
  assert.equal(s.useCount >= 1, true);
  s.dispose();
  t.dispose();
});
