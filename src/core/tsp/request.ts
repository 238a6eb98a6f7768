import {
  Asn1StructureError,
  boolean,
  booleanValue,
  decode,
  encoded,
  integerBytes,
  integerValue,
  isContext,
  isUniversal,
  magnitudeHex,
  objectIdentifier,
  octets,
  octetString,
  oid,
  sequence,
  sequenceItems,
  smallInteger,
  unsignedInteger,
} from '../cms/der.js';
import { DIGEST_OID, digestLabel, digestOfLength, type DigestName } from '../cms/algorithms.js';
import { OID } from '../cms/oids.js';
import { EsignError } from '../errors.js';

/** The one policy the timestamping service issues under (ETSI EN 319 421 baseline). */
export const TSA_POLICY = OID.etsiBaselineTsaPolicy;

export interface TimeStampReqInput {
  /** Hash of the data to timestamp. */
  imprint: Uint8Array;
  /** The imprint's hash algorithm; SHA-256 when absent. */
  digest?: DigestName;
  /** At least 8 random bytes, chosen by the caller; sent as a positive INTEGER. */
  nonce: Uint8Array;
  /** Ask for the TSA certificate in the token; default true. */
  certReq?: boolean;
  /** reqPolicy; default the service's policy. `null` leaves it out. */
  policy?: string | null;
}

/** Builds a DER TimeStampReq (RFC 3161 §2.4.1), version 1, with a SHA-256 (or SHA-384, SHA-512) message imprint. */
export function buildTimeStampReq(input: TimeStampReqInput): Uint8Array {
  const digest = input.digest ?? 'sha256';
  if (digestOfLength(input.imprint.length) !== digest)
    throw new EsignError('INTERNAL', `A ${digestLabel(digest)} message imprint is not ${input.imprint.length} bytes.`);
  if (input.nonce.length < 8) throw new EsignError('INTERNAL', 'A timestamp nonce needs at least 64 random bits.');
  const policy = input.policy === undefined ? TSA_POLICY : input.policy;
  const certReq = input.certReq ?? true;
  return sequence(
    smallInteger(1),
    sequence(sequence(objectIdentifier(DIGEST_OID[digest])), octetString(input.imprint)),
    ...(policy === null ? [] : [objectIdentifier(policy)]),
    unsignedInteger(input.nonce),
    // DER leaves out a BOOLEAN that equals its DEFAULT (FALSE).
    ...(certReq ? [boolean(true)] : []),
  );
}

export interface ParsedTimeStampReq {
  version: bigint;
  hashAlgorithm: string;
  /** Whether the hash AlgorithmIdentifier carried parameters (NULL or other). */
  hashAlgorithmHasParameters: boolean;
  hashedMessage: Uint8Array;
  reqPolicy: string | undefined;
  /** DER content octets of the nonce INTEGER, as sent (to echo unchanged). */
  nonce: Uint8Array | undefined;
  /** The nonce as lower-case hex of its value. */
  nonceHex: string | undefined;
  certReq: boolean;
  /** DER of the extensions field, when present. */
  extensions: Uint8Array | undefined;
}

/** Reads a DER TimeStampReq; anything that is not one is `CMS_BAD_STRUCTURE`. Rules are not checked. */
export function parseTimeStampReq(der: Uint8Array): ParsedTimeStampReq {
  try {
    const fields = sequenceItems(decode(der, 'TimeStampReq'), 'TimeStampReq');
    const [versionBlock, imprintBlock] = fields;
    const [algorithm, hashedMessage] = sequenceItems(imprintBlock, 'messageImprint');
    const algorithmFields = sequenceItems(algorithm, 'hashAlgorithm');
    const request: ParsedTimeStampReq = {
      version: integerValue(versionBlock, 'version'),
      hashAlgorithm: oid(algorithmFields[0], 'hashAlgorithm'),
      hashAlgorithmHasParameters: algorithmFields.length > 1,
      hashedMessage: Uint8Array.from(octets(hashedMessage, 'hashedMessage')),
      reqPolicy: undefined,
      nonce: undefined,
      nonceHex: undefined,
      certReq: false,
      extensions: undefined,
    };
    // Optional fields in their order: reqPolicy, nonce, certReq, [0] extensions.
    let stage = 0;
    for (const field of fields.slice(2)) {
      const at = (next: number): void => {
        if (next <= stage) throw new Asn1StructureError('TimeStampReq: fields out of order');
        stage = next;
      };
      if (isUniversal(field, 6)) {
        at(1);
        request.reqPolicy = oid(field, 'reqPolicy');
      } else if (isUniversal(field, 2)) {
        at(2);
        request.nonce = Uint8Array.from(integerBytes(field, 'nonce'));
        request.nonceHex = magnitudeHex(request.nonce);
      } else if (isUniversal(field, 1)) {
        at(3);
        request.certReq = booleanValue(field, 'certReq');
      } else if (isContext(field, 0)) {
        at(4);
        request.extensions = Uint8Array.from(encoded(field));
      } else {
        throw new Asn1StructureError('TimeStampReq: unexpected field');
      }
    }
    return request;
  } catch (error) {
    if (error instanceof Asn1StructureError) {
      throw new EsignError('CMS_BAD_STRUCTURE', `Not a TimeStampReq: ${error.message}.`, { cause: error });
    }
    throw error;
  }
}
