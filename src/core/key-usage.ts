/** RFC 5280 §4.2.1.3: the keyUsage bits by name, in bit order. */
export const KEY_USAGE_BITS = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
] as const;

/** The names of the bits set in a keyUsage BIT STRING's octets. */
export function keyUsageNames(bytes: Uint8Array): string[] {
  return KEY_USAGE_BITS.filter((_, index) => ((bytes[index >> 3] ?? 0) & (0x80 >> (index & 7))) !== 0);
}
