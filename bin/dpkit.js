#!/usr/bin/env node
// Runs the built dpkit (npm install / npm ci build it through `prepare`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/dpkit.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('dpkit: not built yet: run `npm ci` (or `npm run build`) in the dpkit folder first\n');
  process.exit(1);
}
await import(entry.href);
