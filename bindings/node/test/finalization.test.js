'use strict';
// The FinalizationRegistry fallback: objects never disposed are released after they are
// collected. Observed through the CPU allocator's live allocation count.
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c, collect, live, waitLive } = require('./helpers.js');
const { Tensor, Storage } = c10c;

test('an undisposed tensor is released by the FinalizationRegistry', async () => {
  await collect();
  const base = live();
  (() => { Tensor.empty([1024]); })();
  assert.equal(live(), base + 1);
  assert.equal(await waitLive(base), base);
});

test('an undisposed view and its base are both released', async () => {
  await collect();
  const base = live();
  (() => { const t = Tensor.empty([8, 8]); t.transpose(0, 1).narrow(0, 1, 2); })();
  assert.equal(live(), base + 1);
  assert.equal(await waitLive(base), base);
});

test('undisposed storages and DLPack exports are released', async () => {
  await collect();
  const base = live();
  (() => {
    Storage.new(256);
    const t = Tensor.empty([16]);
    t.toDLPack();
    t.dispose();
  })();
  assert.equal(live(), base + 2);
  assert.equal(await waitLive(base), base);
});

test('dispose() unregisters: a disposed tensor is not released twice', async () => {
  await collect();
  const base = live();
  for (let i = 0; i < 1000; i++) Tensor.empty([4]).dispose();
  await collect();
  assert.equal(live(), base);
});
