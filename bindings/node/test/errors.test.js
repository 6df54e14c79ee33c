'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c } = require('./helpers.js');
const { Tensor, C10cError, DisposedError, Status } = c10c;

test('a refused op throws C10cError with the library status name and message', () => {
  const t = Tensor.empty([2, 3]);
  try {
    assert.throws(() => t.transpose(0, 5), (e) => {
      assert.ok(e instanceof C10cError);
      assert.ok(e instanceof Error);
      assert.equal(e.status, 'C10C_STATUS_INDEX_OUT_OF_RANGE');
      assert.equal(e.code, Status.INDEX_OUT_OF_RANGE);
      assert.equal(e.message, 'Dimension out of range (expected to be in range of [-2, 1], but got 5)');
      return true;
    });
    assert.throws(() => t.view([5, 5]), { name: 'C10cError', status: 'C10C_STATUS_ERROR', message: "shape '[5, 5]' is invalid for input of size 6" });
  } finally {
    t.dispose();
  }
});

test('creation errors carry status and message', () => {
  assert.throws(() => Tensor.empty([-1]), { status: 'C10C_STATUS_ERROR', message: 'Trying to create tensor with negative dimension -1: [-1]' });
  assert.throws(() => Tensor.empty([2], { dtype: 'nope' }), { status: 'C10C_STATUS_INVALID_ARGUMENT', message: 'Unknown dtype name: nope' });
});

test('use after dispose() throws DisposedError, never crashes', () => {
  const t = Tensor.empty([2, 2]);
  const v = t.transpose(0, 1);
  t.dispose();
  assert.equal(t.disposed, true);
  for (const f of [() => t.sizes, () => t.numel, () => t.transpose(0, 1), () => t.buffer(), () => t.toDLPack(), () => t.raw, () => t.storage()]) {
    assert.throws(f, (e) => e instanceof DisposedError && e instanceof C10cError && e.status === 'C10C_STATUS_NULL_POINTER' && /used after dispose/.test(e.message));
  }
  // The view keeps the storage: still usable.
  assert.deepEqual(v.sizes, [2, 2]);
  v.dispose();
  assert.equal(String(t), 'Tensor(disposed)');
});

test('double dispose is harmless, for every owning class', async () => {
  const t = Tensor.empty([3]);
  t.dispose();
  t.dispose();
  await t.disposeAsync();
  const s = Storage();
  s.dispose();
  s.dispose();
  const d = Tensor.empty([2]);
  const dl = d.toDLPack();
  d.dispose();
  dl.dispose();
  dl.dispose();
  assert.throws(() => dl.struct, DisposedError);
  function Storage() { return c10c.Storage.new(16); }
});

test('Symbol.dispose is the dispose method where the runtime has it', () => {
  if (typeof Symbol.dispose !== 'symbol') return;
  const t = Tensor.empty([1]);
  t[Symbol.dispose]();
  assert.equal(t.disposed, true);
});

test('tensors cannot be constructed directly', () => {
  assert.throws(() => new Tensor(), TypeError);
});
