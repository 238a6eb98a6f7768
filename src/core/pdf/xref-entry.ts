/** Where an object lives: at a byte offset, inside an object stream, or nowhere (free). */
export type XrefEntry =
  | { kind: 'free' }
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number };
