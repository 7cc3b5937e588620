/**
 * Shared-memory records, declared once. A record is a fixed layout of fields
 * at byte offsets in the heap (the mbuf, a pool header, a ring header, a
 * queue's state block): the TypeScript side and the wasm kernels must agree
 * on every offset, so neither writes them. Each owner declares its records in
 * `<owner>.record.ts` beside it (`export default defineRecords(...)`), and
 * `scripts/gen-layouts.ts` (run by `npm run build`) writes from it:
 *   `<owner>-layout.ts`     TypeScript constants, imported by the owner and its twins
 *   `<owner>-layout.as.ts`  the same constants for AssemblyScript, imported by kernels
 * Both are committed; test/eal/layout.test.ts fails when one is stale.
 *
 * What a record emits (NAME is the record's name in UPPER_SNAKE):
 *   NAME_SIZE (or `sizeName`)    bytes per record (the header size for one with a flexible array)
 *   NAME_SHIFT, NAME_WORD_SHIFT… for records addressed by handle (`handles`): log2 of the record
 *                                size in bytes, and in u16 (HALF), u32 (WORD) and 8-byte (SLOT)
 *                                units, so `(h << MBUF_HALF_SHIFT) + H_PORT` is a u16 index
 *   PREFIX_FIELD                 byte offset of each field (both languages)
 *   INDEX_FIELD                  for field types listed in `index`: the typed-array index from
 *                                the record's own index (TypeScript only: the byte offset / width)
 *   PREFIX_FIELD_COUNT           for array fields: the element count
 *   each of `consts`, and each `flags` group (a TypeScript object, AssemblyScript `AS_KEY` constants)
 *   STEM_LAYOUT_ID               a hash of the whole file, which the kernels export as `layout<Stem>`
 *                                so a test can tell a stale wasm build
 * This module holds only the declaration types: it is imported by the
 * declarations and by the generator, never on a data path.
 */

/** Field types and their widths in bytes. */
export const FIELD_BYTES = { u8: 1, u16: 2, u32: 4, u64: 8, f64: 8 } as const;
export type FieldType = keyof typeof FIELD_BYTES;

export interface FieldDecl {
  readonly type: FieldType;
  /** Byte offset from the record's start, a multiple of the type's width. */
  readonly at: number;
  /** An array of this many elements; 0: a flexible array that ends the record (its `at` is the record size). */
  readonly count?: number;
  /**
   * A wider view over narrower fields declared beside it (e.g. u32 `dataOffRefcnt`
   * over u16 `dataOff` and `refcnt`, which a reset writes in one store). Views may
   * overlap other fields; nothing else may.
   */
  readonly view?: boolean;
  /** Why the field is there, what it holds, who writes it. */
  readonly doc: string;
}

export interface ConstDecl {
  readonly value: number;
  readonly doc: string;
}

export interface FlagsDecl {
  /** AssemblyScript names are `${as}_${KEY}` (AssemblyScript has no `as const` objects). */
  readonly as: string;
  readonly doc: string;
  readonly values: Readonly<Record<string, number>>;
  /** DPDK's name for each value is this prefix and the key, said in each value's doc comment. */
  readonly dpdk?: string;
  /** A value's own doc comment, where the DPDK name alone does not say it. */
  readonly docs?: Readonly<Record<string, string>>;
}

export interface RecordDecl {
  /** camelCase; NAME below is its UPPER_SNAKE form. */
  readonly name: string;
  /** The header comment of the generated files: why the record is what it is. */
  readonly doc: string;
  readonly size: number;
  /** The size constant's name, when NAME_SIZE would mislead (default NAME_SIZE). */
  readonly sizeName?: string;
  /**
   * The records form an array addressed by handle, record `h` at byte `h << NAME_SHIFT`
   * (the mbuf): the size must be a power of two, and the shifts are emitted.
   */
  readonly handles?: boolean;
  /**
   * The native shim reads the record too: its constants also go to
   * native/src/<owner>-layout.h (C++ constexprs in dpkit::layout), so no
   * offset is written by hand there either.
   */
  readonly native?: boolean;
  /** Prefix of the byte-offset constants. */
  readonly prefix: string;
  /** Prefixes of TypeScript typed-array index constants, by field type. */
  readonly index?: Partial<Readonly<Record<FieldType, string>>>;
  readonly fields: Readonly<Record<string, FieldDecl>>;
  readonly consts?: Readonly<Record<string, ConstDecl>>;
  readonly flags?: Readonly<Record<string, FlagsDecl>>;
}

/** What a `*.record.ts` file exports by default. */
export function defineRecords(...records: RecordDecl[]): readonly RecordDecl[] {
  return records;
}
