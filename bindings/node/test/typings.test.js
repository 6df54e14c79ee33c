'use strict';
// index.d.ts declares exactly the runtime exports of lib/index.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { c10c } = require('./helpers.js');

test('index.d.ts names every export', () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const declared = new Set([...dts.matchAll(/^export declare (?:class|const|function) (\w+)/gm)].map((m) => m[1]));
  assert.deepEqual([...declared].sort(), Object.keys(c10c).sort());
});
