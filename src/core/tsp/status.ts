/** PKIStatus and PKIFailureInfo of RFC 3161 §2.4.2, with the service's wording of each failure. */

export const PKIStatus = {
  granted: 0,
  grantedWithMods: 1,
  rejection: 2,
  waiting: 3,
  revocationWarning: 4,
  revocationNotification: 5,
} as const;

/** Bit positions of PKIFailureInfo. */
export const PKIFailureInfo = {
  badAlg: 0,
  badRequest: 2,
  badDataFormat: 5,
  timeNotAvailable: 14,
  unacceptedPolicy: 15,
  unacceptedExtension: 16,
  addInfoNotAvailable: 17,
  systemFailure: 25,
} as const;
export type FailureInfoName = keyof typeof PKIFailureInfo;

export const FAILURE_INFO_TEXT: Readonly<Record<FailureInfoName, string>> = {
  badAlg: 'unsupported or unrecognised hash algorithm',
  badRequest: 'request not permitted',
  badDataFormat: 'not decodable as a TimeStampReq, or the hash length does not match the algorithm',
  timeNotAvailable: 'trusted time source temporarily unavailable; retry later',
  unacceptedPolicy: 'requested policy not supported',
  unacceptedExtension: 'request contains an unsupported extension',
  addInfoNotAvailable: 'requested additional information unavailable',
  systemFailure: 'unexpected internal error at the timestamp authority',
};

const NAME_BY_BIT = new Map<number, FailureInfoName>(
  (Object.entries(PKIFailureInfo) as [FailureInfoName, number][]).map(([name, bit]) => [bit, name]),
);

/** DER named-bit-list content (without the unused-bits octet) and unused-bit count for these failures. */
export function encodeFailureInfo(names: readonly FailureInfoName[]): { bytes: Uint8Array; unusedBits: number } {
  const bits = names.map((name) => PKIFailureInfo[name]);
  if (bits.length === 0) return { bytes: new Uint8Array(0), unusedBits: 0 };
  const highest = Math.max(...bits);
  const bytes = new Uint8Array((highest >> 3) + 1);
  for (const bit of bits) bytes[bit >> 3] = (bytes[bit >> 3] as number) | (0x80 >> (bit & 7));
  return { bytes, unusedBits: 7 - (highest & 7) };
}

/** Names of the bits set in a PKIFailureInfo; unknown bits as `bit N`. */
export function decodeFailureInfo(bytes: Uint8Array): string[] {
  const names: string[] = [];
  bytes.forEach((byte, index) => {
    for (let offset = 0; offset < 8; offset++) {
      if (byte & (0x80 >> offset)) {
        const bit = index * 8 + offset;
        names.push(NAME_BY_BIT.get(bit) ?? `bit ${bit}`);
      }
    }
  });
  return names;
}
