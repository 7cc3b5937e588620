/** Summary statistics of repeated measurements. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const s = [...samples].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}
