// The exported functions of a wasm module by their index in its function
// space: how V8 names a kernel in its code listings and in perf's maps
// (`wasm-function[N]`). Used by kernel-code.js and lcore-profile.js.

/** Reads an unsigned LEB128 at `at`. @returns the value and the offset after it. */
function leb(b, at) {
  let v = 0;
  let shift = 0;
  for (;;) {
    const x = b[at++];
    v += (x & 0x7f) * 2 ** shift;
    shift += 7;
    if ((x & 0x80) === 0) return [v, at];
  }
}

/** Each exported function's name and its index in the module's function space (imports first). */
export function exportedFunctions(b) {
  const out = new Map();
  let at = 8; // magic and version
  while (at < b.length) {
    const id = b[at++];
    let size;
    [size, at] = leb(b, at);
    const end = at + size;
    if (id === 7) {
      let count;
      [count, at] = leb(b, at);
      for (let i = 0; i < count; i++) {
        let len;
        [len, at] = leb(b, at);
        const name = new TextDecoder().decode(b.subarray(at, at + len));
        at += len;
        const kind = b[at++];
        let index;
        [index, at] = leb(b, at);
        if (kind === 0) out.set(name, index);
      }
    }
    at = end;
  }
  return out;
}
