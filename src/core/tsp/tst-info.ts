import {
  Asn1StructureError,
  booleanValue,
  decode,
  encoded,
  explicit,
  explicitInner,
  generalizedTime,
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
  setItems,
  smallInteger,
  stringValue,
  timeValue,
  tlv,
  unsignedInteger,
} from '../cms/der.js';
import type { Block } from '../cms/der.js';

export interface Accuracy {
  seconds?: number;
  millis?: number;
  micros?: number;
}

export interface TstInfo {
  version: number;
  policy: string;
  messageImprint: { hashAlgorithm: string; hashedMessage: Uint8Array };
  /** Lower-case hex, no leading zero bytes. */
  serialNumber: string;
  genTime: Date;
  accuracy?: Accuracy;
  ordering: boolean;
  /** Lower-case hex of the nonce value, no leading zero bytes. */
  nonce?: string;
  /** The `tsa` GeneralName as text (`CN=…, O=…` for a directory name). */
  tsaName?: string;
}

export interface TstInfoInput {
  policy: string;
  hashAlgorithm: string;
  hashedMessage: Uint8Array;
  /** Big-endian magnitude of the serial number. */
  serialNumber: Uint8Array;
  genTime: Date;
  accuracy?: Accuracy;
  /** INTEGER content octets exactly as the request carried them. */
  nonce?: Uint8Array;
  /** DER of the TSA's directory Name, sent as `tsa [0] GeneralName`. */
  tsaName?: Uint8Array;
}

/** Encodes a TSTInfo (RFC 3161 §2.4.2), version 1. */
export function buildTstInfo(input: TstInfoInput): Uint8Array {
  const accuracy = input.accuracy;
  return sequence(
    smallInteger(1),
    objectIdentifier(input.policy),
    sequence(sequence(objectIdentifier(input.hashAlgorithm)), octetString(input.hashedMessage)),
    unsignedInteger(input.serialNumber),
    generalizedTime(input.genTime),
    ...(accuracy
      ? [
          sequence(
            ...(accuracy.seconds ? [smallInteger(accuracy.seconds)] : []),
            ...(accuracy.millis ? [implicitInteger(0, accuracy.millis)] : []),
            ...(accuracy.micros ? [implicitInteger(1, accuracy.micros)] : []),
          ),
        ]
      : []),
    ...(input.nonce ? [tlv(0x02, input.nonce)] : []),
    ...(input.tsaName ? [explicit(0, explicit(4, input.tsaName))] : []),
  );
}

function implicitInteger(tagNumber: number, value: number): Uint8Array {
  return tlv(0x80 | tagNumber, smallInteger(value).subarray(2));
}

/** Reads a DER TSTInfo; throws Asn1StructureError when it is not one. */
export function readTstInfo(der: Uint8Array): TstInfo {
  const fields = sequenceItems(decode(der, 'TSTInfo'), 'TSTInfo');
  const [versionBlock, policyBlock, imprintBlock, serialBlock, genTimeBlock, ...optional] = fields;
  const [algorithm, hashedMessage] = sequenceItems(imprintBlock, 'messageImprint');
  const [algorithmOid] = sequenceItems(algorithm, 'hashAlgorithm');
  const info: TstInfo = {
    version: Number(integerValue(versionBlock, 'TSTInfo version')),
    policy: oid(policyBlock, 'policy'),
    messageImprint: {
      hashAlgorithm: oid(algorithmOid, 'hashAlgorithm'),
      hashedMessage: Uint8Array.from(octets(hashedMessage, 'hashedMessage')),
    },
    serialNumber: magnitudeHex(integerBytes(serialBlock, 'serialNumber')),
    genTime: timeValue(genTimeBlock, 'genTime'),
    ordering: false,
  };
  if (!isUniversal(genTimeBlock, 24)) throw new Asn1StructureError('genTime: expected a GeneralizedTime');
  for (const field of optional) {
    if (isUniversal(field, 16)) info.accuracy = readAccuracy(field);
    else if (isUniversal(field, 1)) info.ordering = booleanValue(field, 'ordering');
    else if (isUniversal(field, 2)) info.nonce = magnitudeHex(integerBytes(field, 'nonce'));
    else if (isContext(field, 0)) info.tsaName = generalNameText(explicitInner(field, 0, 'tsa'));
    else if (isContext(field, 1))
      continue; // extensions: nothing esign relies on
    else throw new Asn1StructureError('TSTInfo: unexpected field');
  }
  return info;
}

function readAccuracy(block: Block): Accuracy {
  const accuracy: Accuracy = {};
  for (const item of sequenceItems(block, 'accuracy')) {
    if (isUniversal(item, 2)) accuracy.seconds = Number(integerValue(item, 'accuracy seconds'));
    else if (isContext(item, 0)) accuracy.millis = implicitIntegerValue(item);
    else if (isContext(item, 1)) accuracy.micros = implicitIntegerValue(item);
    else throw new Asn1StructureError('accuracy: unexpected field');
  }
  return accuracy;
}

function implicitIntegerValue(block: Block): number {
  return octets(block, 'accuracy').reduce((value, byte) => value * 256 + byte, 0);
}

const NAME_LABELS: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.97': 'organizationIdentifier',
};

/** A GeneralName as text: a directory name as `CN=…, O=…`, a DNS name or URI as itself. */
export function generalNameText(block: Block): string {
  if (isContext(block, 4)) {
    // Every token of a TSA names it alike: its name is read once per run, not once per token.
    const der = encoded(block);
    const key = Buffer.from(der.buffer, der.byteOffset, der.length).toString('latin1');
    let text = directoryNames.get(key);
    if (text === undefined) {
      text = distinguishedNameText(explicitInner(block, 4, 'directoryName'));
      if (directoryNames.size >= DIRECTORY_NAMES) directoryNames.clear();
      directoryNames.set(key, text);
    }
    return text;
  }
  if (isContext(block, 1) || isContext(block, 2) || isContext(block, 6))
    return new TextDecoder().decode(octets(block, 'GeneralName'));
  return `[GeneralName ${block.tagNumber}]`;
}

const directoryNames = new Map<string, string>();
const DIRECTORY_NAMES = 16;

export function distinguishedNameText(name: Block): string {
  return sequenceItems(name, 'Name')
    .flatMap((rdn) => setItems(rdn, 'RelativeDistinguishedName'))
    .map((pair) => {
      const [type, value] = sequenceItems(pair, 'AttributeTypeAndValue');
      const typeOid = oid(type, 'attribute type');
      let text: string;
      try {
        text = stringValue(value, 'attribute value');
      } catch {
        text = `#${Buffer.from(encoded(value as Block)).toString('hex')}`;
      }
      return `${NAME_LABELS[typeOid] ?? typeOid}=${text}`;
    })
    .join(', ');
}
