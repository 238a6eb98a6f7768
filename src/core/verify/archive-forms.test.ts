/**
 * Every CAdES archive-timestamp form DSS validates, recomputed by verify: the archive-time-stamp-v3
 * with the ats-hash-index-v3 esign writes, with the older ats-hash-index (ETSI TS 101 733 v2.2.1,
 * 0.4.0.1733.2.5: each unsigned attribute hashed whole), and the archive-time-stamp-v2
 * (1.2.840.113549.1.9.16.2.48, TS 101 733 Annex K) over the encapContentInfo, the content, the
 * certificates, the crls and the SignerInfo — both of Annex K's readings of the unsigned attributes,
 * in a detached .p7s and in a .p7m. The imprints here are computed from the structures as the
 * standards word them, apart from the code under test.
 */
import { createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bytesSource } from '../pdf/byte-source.js';
import {
  archivedParts,
  archiveTimestampImprint,
  archiveTimestampRequest,
  OID_ARCHIVE_TIMESTAMP_V2,
  OID_ARCHIVE_TIMESTAMP_V3,
  OID_ATS_HASH_INDEX,
  OID_ATS_HASH_INDEX_V3,
} from '../cms/archive-timestamp.js';
import {
  concatBytes,
  decode,
  isContext,
  objectIdentifier,
  octetString,
  sequence,
  tlv,
  type Block,
} from '../cms/der.js';
import { envelopedContent, readEnveloping } from '../cms/enveloping.js';
import { OID } from '../cms/oids.js';
import {
  addUnsignedAttribute,
  encodeSignedData,
  oneSignerEach,
  signedDataParts,
  type SignedDataParts,
} from '../cms/signed-data.js';
import { attribute, buildSignedAttributes } from '../cms/signed-attributes.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import { buildTimeStampReq } from '../tsp/request.js';
import { processTimeStampResp } from '../tsp/response.js';
import { SandboxTsa } from '../../sandbox/tsa/tsa.js';
import { verifyCades } from './cades.js';
import type { ReadSignedBytes } from './cms-check.js';
import type { SignatureReport } from './types.js';

/** The test PKI publishes no revocation status: unknown status passes (soft-fail) here, where the verdict is about something else. */
const SOFT_FAIL = { mode: 'soft-fail' } as const;

const root = issueTestCertificate({ commonName: 'Archive Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Archive Signer', issuer: root });
const tsaIdentity = issueTestCertificate({
  commonName: 'Archive TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
const content = new TextEncoder().encode('<fattura>archived</fattura>\n');
const contentHash = new Uint8Array(createHash('sha256').update(content).digest());
let clock = new Date('2026-11-01T10:00:00Z');
let serial = 1n;
const tsa = new SandboxTsa({
  certificate: tsaIdentity.der,
  privateKey: tsaIdentity.privateKey,
  clock: { now: () => clock },
  serials: { next: () => ++serial },
});
const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

/** A real token from a TSA over `imprint`, a minute later each time (archive timestamps are ordered by time). */
function timestamp(imprint: Uint8Array): Uint8Array {
  clock = new Date(clock.getTime() + 60_000);
  const nonce = Uint8Array.from([0x7f, 1, 2, 3, 4, 5, 6, 7]);
  return processTimeStampResp(tsa.respond(buildTimeStampReq({ imprint, nonce })), { imprint, nonce, policy: null })
    .token;
}

/** The parts of a B-T CAdES signature of `content` with a CRL in SignedData.crls (what an archive timestamp must keep). */
function signatureParts(): Omit<SignedDataParts, 'eContent'> {
  const attributes = buildSignedAttributes({ contentDigest: contentHash, signerCertificate: signer.der });
  const signatureValue = new Uint8Array(sign('sha256', attributes.der, signer.privateKey));
  return signedDataParts({
    signedAttributesDer: attributes.der,
    signatureValue,
    certificates: [signer.der, root.der, tsaIdentity.der],
    unsignedAttributes: { signatureTimeStampToken: timestamp(sha256(signatureValue)) },
    validationData: { certificates: [], ocsps: [], crls: [sequence(objectIdentifier('1.2.3.4'))] },
  });
}

/** A detached (.p7s) or enveloping (.p7m) CAdES signature of `content`. */
function signature(encapsulate = false): Uint8Array {
  const parts = signatureParts();
  return encodeSignedData(encapsulate ? { ...parts, eContent: content } : parts);
}

/** The SignedData's fields and the SignerInfo's, as encoded (one SignerInfo). */
function fieldsOf(cms: Uint8Array) {
  const signedData = decode(cms, 'cms').items[1]!.items[0]!;
  const [, , encap, ...rest] = signedData.items;
  const signerInfo = rest[rest.length - 1]!.items[0]!;
  return {
    encap: encap!,
    certificates: rest.find((block) => isContext(block, 0)),
    crls: rest.find((block) => isContext(block, 1)),
    signed: signerInfo.items.filter((field) => !isContext(field, 1)),
    unsigned: signerInfo.items.find((field) => isContext(field, 1))?.items ?? [],
  };
}

/** ATSHashIndex (TS 101 733 v2.2.1 §6.4.2): SHA-256 (DEFAULT) of each certificate, CRL and unsigned attribute whole. */
function olderAtsHashIndex(cms: Uint8Array): Uint8Array {
  const { certificates, crls, unsigned } = fieldsOf(cms);
  const hashes = (blocks: readonly Block[]) => sequence(...blocks.map((block) => octetString(sha256(block.encoded))));
  return sequence(hashes(certificates?.items ?? []), hashes(crls?.items ?? []), hashes(unsigned));
}

/** An archive-time-stamp-v3 whose token carries the older ats-hash-index, as DSS before EN 319 122-1 wrote it. */
function withOlderIndex(cms: Uint8Array): Uint8Array {
  const index = olderAtsHashIndex(cms);
  const imprint = archiveTimestampImprint(archivedParts(cms), contentHash, index, 'sha256');
  const token = addUnsignedAttribute(timestamp(imprint), attribute(OID_ATS_HASH_INDEX, index), 'token');
  return addUnsignedAttribute(cms, attribute(OID_ARCHIVE_TIMESTAMP_V3, token), 'signature');
}

/**
 * An archive-time-stamp-v2 (TS 101 733 Annex K): the hash of the encapContentInfo, the detached
 * content, the certificates and crls fields, the SignerInfo's fields and its unsigned attributes,
 * their SET's tag and length included (v2.2.1) or not (v1.8.3).
 */
function withArchiveV2(cms: Uint8Array, setTagAndLength: boolean, encapsulated?: Uint8Array): Uint8Array {
  const { encap, certificates, crls, signed, unsigned } = fieldsOf(cms);
  const attributes = unsigned.map((block) => block.encoded);
  const imprint = sha256(
    encapsulated ?? concatBytes([encap.encoded, content]),
    ...[certificates, crls].flatMap((field) => (field ? [field.encoded] : [])),
    ...signed.map((field) => field.encoded),
    setTagAndLength ? tlv(0xa1, ...attributes) : concatBytes(attributes),
  );
  return addUnsignedAttribute(cms, attribute(OID_ARCHIVE_TIMESTAMP_V2, timestamp(imprint)), 'signature');
}

async function verify(cms: Uint8Array, over = content, readEncapsulated?: ReadSignedBytes): Promise<SignatureReport> {
  const report = await verifyCades(
    cms,
    'x.p7s',
    async (consume) => consume(over),
    { trustAnchors: [root.der], now: new Date('2026-11-29T00:00:00Z'), revocation: SOFT_FAIL },
    readEncapsulated,
  );
  return report.signatures[0]!;
}

/** Archived, and the archive timestamp held: below B-LT (no OCSP/CRL for the chains), verify says so. */
const ARCHIVED = 'B-LTA not reached: the archive timestamp covers a signature below B-LT';

describe('archive-time-stamp-v3 with the older ats-hash-index (0.4.0.1733.2.5)', () => {
  it('is recomputed and holds; an attribute it indexed, gone, or another content fails it', async () => {
    const cms = withOlderIndex(signature());
    const good = await verify(cms);
    expect(good.problems).toEqual([]);
    expect(good.warnings).toContain(ARCHIVED);
    expect(good.status).toBe('valid');

    const changed = await verify(cms, new TextEncoder().encode('<fattura>changed</fattura>\n'));
    expect(changed).toMatchObject({ status: 'invalid', indication: 'TOTAL-FAILED', subIndication: 'HASH_FAILURE' });
  });

  it('an index that names an attribute the signature no longer holds: HASH_FAILURE, "no longer in the signature"', async () => {
    const plain = signature();
    const index = olderAtsHashIndex(plain);
    // The index of a signature with one more attribute than the one it is put on.
    const more = addUnsignedAttribute(plain, attribute('1.2.3.5', octetString(Uint8Array.of(1))), 'signature');
    const moreIndex = olderAtsHashIndex(more);
    expect(moreIndex).not.toEqual(index);
    const imprint = archiveTimestampImprint(archivedParts(plain), contentHash, moreIndex, 'sha256');
    const token = addUnsignedAttribute(timestamp(imprint), attribute(OID_ATS_HASH_INDEX, moreIndex), 'token');
    const cms = addUnsignedAttribute(plain, attribute(OID_ARCHIVE_TIMESTAMP_V3, token), 'signature');
    const report = await verify(cms);
    expect(report).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
    expect(report.problems.join('\n')).toMatch(/an unsigned attribute it archived is no longer in the signature/);
  });

  it('the v3 index esign writes still holds beside it', async () => {
    const plain = signature();
    const { imprint, index } = archiveTimestampRequest(plain, contentHash, 'sha256');
    const token = addUnsignedAttribute(timestamp(imprint), attribute(OID_ATS_HASH_INDEX_V3, index), 'token');
    const cms = addUnsignedAttribute(plain, attribute(OID_ARCHIVE_TIMESTAMP_V3, token), 'signature');
    expect((await verify(cms)).warnings).toContain(ARCHIVED);
  });
});

describe('archive-time-stamp-v2 (1.2.840.113549.1.9.16.2.48)', () => {
  it.each([
    ['with the unsigned attributes SET tag and length (TS 101 733 v2.2.1)', true],
    ['without them (v1.8.3)', false],
  ])('%s: recomputed over the content read once more, and holds', async (_name, setTagAndLength) => {
    const cms = withArchiveV2(signature(), setTagAndLength);
    const report = await verify(cms);
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContain(ARCHIVED);
    expect(report.status).toBe('valid');
  });

  it('another content, or a certificate taken out of the SignedData after it: TOTAL-FAILED/HASH_FAILURE', async () => {
    const cms = withArchiveV2(signature(), true);
    expect(await verify(cms, new TextEncoder().encode('<fattura>changed</fattura>\n'))).toMatchObject({
      indication: 'TOTAL-FAILED',
      subIndication: 'HASH_FAILURE',
    });
    // A v2 covers the certificates field whole: the same SignerInfo, archive timestamp and all, with one certificate less.
    const parts = signatureParts();
    const archived = withArchiveV2(encodeSignedData(parts), true);
    const fewer = encodeSignedData({
      ...parts,
      certificates: parts.certificates.slice(0, 2),
      signer: { ...parts.signer, unsignedAttributes: fieldsOf(archived).unsigned.map((block) => block.encoded) },
    });
    const report = await verify(fewer);
    expect(report).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
    expect(report.problems.join('\n')).toMatch(/archive timestamp: the message imprint does not match/);
  });

  it('two in a row: the later covers the earlier, the earlier leaves the later out', async () => {
    const cms = withArchiveV2(withArchiveV2(signature(), true), true);
    const report = await verify(cms);
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContain(ARCHIVED);
  });

  it('in a .p7m: over the encapContentInfo as it lies in the file, the content inside', async () => {
    const enveloping = signature(true);
    const { encap } = fieldsOf(enveloping);
    const archived = withArchiveV2(enveloping, true, encap.encoded);
    const source = bytesSource(archived);
    const found = await readEnveloping(source, { ber: true });
    const [detached] = oneSignerEach(found.detached);
    const readContent: ReadSignedBytes = async (consume) => {
      for await (const chunk of envelopedContent(source, found, 1024)) consume(chunk);
    };
    const readEncapsulated: ReadSignedBytes = async (consume) =>
      consume(await source.read(found.encapsulated.start, found.encapsulated.end - found.encapsulated.start));
    const report = await verifyCades(
      detached!,
      'x.p7m',
      readContent,
      { trustAnchors: [root.der], now: new Date('2026-11-29T00:00:00Z'), revocation: SOFT_FAIL },
      readEncapsulated,
    );
    expect(report.signatures[0]!.problems).toEqual([]);
    expect(report.signatures[0]!.warnings).toContain(ARCHIVED);
  });
});
