/** Where dpkit's own files are, from src/ under tsx or dist/src/ once built. */
import { readFileSync } from 'node:fs';

let root: URL | undefined;

/** The folder holding dpkit's package.json (with a trailing slash). */
export function packageRoot(): URL {
  if (root) return root;
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string };
      if (pkg.name === 'dpkit') return (root = dir);
    } catch {
      // not here: keep walking up
    }
  }
  throw new Error(`dpkit: cannot find dpkit's package.json above ${import.meta.url}`);
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('package.json', packageRoot()), 'utf8')) as { version: string };
  return pkg.version;
}
