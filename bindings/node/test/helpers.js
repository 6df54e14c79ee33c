'use strict';
// Shared test helpers: the binding, a gc() that works with or without --expose-gc, and the CPU
// allocator's live allocation count.
const v8 = require('node:v8');
const vm = require('node:vm');
const c10c = require('../lib/index.js');

let gcFn = typeof global.gc === 'function' ? global.gc : null;
if (!gcFn) {
  v8.setFlagsFromString('--expose-gc');
  gcFn = vm.runInNewContext('gc');
}

/** Full GCs, then lets FinalizationRegistry callbacks run (they are tasks after a GC). */
async function collect(rounds = 3) {
  for (let i = 0; i < rounds; i++) {
    gcFn();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  }
}

function live() {
  return Number(c10c.allocatorStats(c10c.DeviceType.CPU).allocation[0].current);
}

/** Waits (collecting) until live() === want or the tries run out; returns live(). */
async function waitLive(want, tries = 50) {
  for (let i = 0; i < tries && live() !== want; i++) await collect(1);
  return live();
}

module.exports = { c10c, collect, live, waitLive };
