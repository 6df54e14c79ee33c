'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c, collect, live } = require('./helpers.js');
const { Tensor } = c10c;

test('disposeAsync() releases on a koffi worker thread', async () => {
  await collect();
  const base = live();
  const ts = [];
  for (let i = 0; i < 200; i++) ts.push(Tensor.empty([8]));
  const views = ts.map((t) => t.unsqueeze(0));
  assert.equal(live(), base + 200);
  await Promise.all(ts.map((t) => t.disposeAsync()));
  assert.ok(ts.every((t) => t.disposed));
  assert.throws(() => ts[0].sizes, { name: 'DisposedError' });
  assert.equal(live(), base + 200, 'the views keep the storages');
  await Promise.all(views.map((v) => v.disposeAsync()));
  assert.equal(live(), base);
  await ts[0].disposeAsync(); // harmless again
});
