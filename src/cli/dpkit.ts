#!/usr/bin/env node
// Entry point: bin/dpkit.js runs the built copy of this file.
import { run } from './main.js';

await run(process.argv.slice(2));
