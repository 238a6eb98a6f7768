import type { X509Certificate } from 'node:crypto';
import { x509Of } from '../cms/x509.js';
import { readCertificate } from '../cms/certificate.js';
import {
  Asn1StructureError,
  bitStringValue,
  decode,
  encoded,
  integerValue,
  isUniversal,
  magnitudeHex,
  oid,
  sequenceItems,
  stringValue,
} from '../cms/der.js';
import type { Block } from '../cms/der.js';
import { OID } from '../cms/oids.js';
import { bytesEqual, parseSignedData } from '../cms/parse.js';
import type { ParsedSignedData } from '../cms/parse.js';
import { verifySignerInfo } from '../cms/verify-signer.js';
import { EsignError, isEsignError } from '../errors.js';
import { TSA_POLICY } from './request.js';
import { FAILURE_INFO_TEXT, PKIStatus, decodeFailureInfo } from './status.js';
import type { FailureInfoName } from './status.js';
import { readTstInfo } from './tst-info.js';
import type { TstInfo } from './tst-info.js';
import { issuedBy as signedBy } from '../certificate-links.js';

export interface ParsedTimeStampToken {
  /** DER of the TimeStampToken (ContentInfo). */
  token: Uint8Array;
  tstInfo: TstInfo;
  /** The TSA certificate, when the token carries it (certReq). */
  signerCertificate: Uint8Array | undefined;
  /** Every certificate in the token. */
  certificates: Uint8Array[];
  signedData: ParsedSignedData;
}

/** Reads a TimeStampToken (CMS SignedData over a TSTInfo). Malformed input is `CMS_BAD_STRUCTURE`. */
export function parseTimeStampToken(tokenDer: Uint8Array): ParsedTimeStampToken {
  const signedData = parseSignedData(tokenDer);
  if (signedData.encapContentType !== OID.tstInfo || signedData.encapContent === undefined) {
    throw new EsignError('CMS_BAD_STRUCTURE', 'Not a timestamp token: the signed content is not a TSTInfo.');
  }
  let tstInfo: TstInfo;
  try {
    tstInfo = readTstInfo(signedData.encapContent);
  } catch (error) {
    if (!(error instanceof Asn1StructureError)) throw error;
    throw new EsignError('CMS_BAD_STRUCTURE', `Not a timestamp token: ${error.message}.`, { cause: error });
  }
  return {
    token: tokenDer,
    tstInfo,
    signerCertificate: signedData.signerCertificate,
    certificates: signedData.certificates,
    signedData,
  };
}

/**
 * Checks the token's own signature: content type id-ct-TSTInfo, message digest of the TSTInfo,
 * ESS signing certificate naming the TSA certificate, the signature over the signed attributes, and
 * the TSA certificate's critical extended key usage (timeStamping only). `TSA_SIGNATURE_INVALID`.
 */
export function verifyTimeStampTokenSignature(token: ParsedTimeStampToken): void {
  const { signedData } = token;
  const fail = (reason: string): never => {
    throw new EsignError('TSA_SIGNATURE_INVALID', `The timestamp token is not validly signed: ${reason}.`, {
      hint: 'The timestamp authority returned a token that cannot be trusted; try again or use another TSA URL.',
    });
  };
  if (signedData.signerCertificate === undefined) fail('it does not carry the TSA certificate');
  if (signedData.signedAttributes?.contentType !== OID.tstInfo) fail('the content-type attribute is not id-ct-TSTInfo');
  const check = verifySignerInfo(signedData, { requireSigningCertificate: true });
  if (!check.valid) fail(check.reason);
}

/**
 * Checks the TSA certificate (first of `tokenCerts`; the rest may serve as intermediates): an
 * extended key usage extension that is critical and names only id-kp-timeStamping, and a chain to
 * one of `trustAnchors` with every certificate valid at `at`. `TSA_CERT_UNTRUSTED` otherwise.
 */
export function verifyTsaCertificate(tokenCerts: Uint8Array[], trustAnchors: Uint8Array[], at: Date): void {
  const [leafDer, ...others] = tokenCerts;
  const untrusted = (reason: string, cause?: unknown): EsignError =>
    new EsignError('TSA_CERT_UNTRUSTED', `The timestamp authority's certificate is not trusted: ${reason}.`, {
      hint: 'Check the TSA URL, or add the TSA root certificate to the trust anchors.',
      cause,
    });
  if (leafDer === undefined) throw untrusted('the token carries no certificate');
  let leaf: X509Certificate;
  let anchors: X509Certificate[];
  let intermediates: X509Certificate[];
  checkTimeStampingUsage(leafDer);
  try {
    leaf = x509Of(leafDer);
    anchors = trustAnchors.map((der) => x509Of(der));
    intermediates = others.map((der) => x509Of(der));
  } catch (error) {
    throw untrusted('a certificate cannot be read', error);
  }
  const leafName = leaf.subject.replace(/\n/g, ', ');
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    if (!validAt(current, at))
      throw untrusted(`${current.subject.replace(/\n/g, ', ')} is not valid at ${at.toISOString()}`);
    if (anchors.some((anchor) => anchor.raw.equals(current.raw))) return;
    const anchor = anchors.find((candidate) => issues(candidate, current));
    if (anchor !== undefined) {
      if (!validAt(anchor, at))
        throw untrusted(`the trust anchor ${anchor.subject.replace(/\n/g, ', ')} is not valid at ${at.toISOString()}`);
      return;
    }
    const next = intermediates.find((candidate) => candidate !== current && candidate.ca && issues(candidate, current));
    if (next === undefined) break;
    current = next;
  }
  throw untrusted(`${leafName} does not chain to a trusted root`);
}

/**
 * Whether `issuer` signed `subject`, remembered per pair: a batch checks every token against the same
 * TSA chain, and the answer for the same two certificates (x509Of keeps one object per DER) never changes.
 */
function issues(issuer: X509Certificate, subject: X509Certificate): boolean {
  let known = issuedBy.get(subject);
  if (!known) issuedBy.set(subject, (known = new WeakMap()));
  let answer = known.get(issuer);
  if (answer === undefined) {
    answer = signedBy(subject, issuer);
    known.set(issuer, answer);
  }
  return answer;
}
const issuedBy = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();

function validAt(certificate: X509Certificate, at: Date): boolean {
  const from = new Date(certificate.validFrom).getTime();
  const to = new Date(certificate.validTo).getTime();
  return from <= at.getTime() && at.getTime() <= to;
}

/** The TSA certificate's extended key usage must be critical and name only id-kp-timeStamping (RFC 3161 §2.3). */
export function checkTimeStampingUsage(certificateDer: Uint8Array): void {
  // The same TSA certificate comes back with every token of a batch: read once, by its X509Certificate.
  const certificate = tryX509(certificateDer);
  if (certificate && timeStampingCertificates.has(certificate)) return;
  readTimeStampingUsage(certificateDer);
  if (certificate) timeStampingCertificates.add(certificate);
}
const timeStampingCertificates = new WeakSet<X509Certificate>();

function tryX509(der: Uint8Array): X509Certificate | undefined {
  try {
    return x509Of(der);
  } catch {
    return undefined;
  }
}

function readTimeStampingUsage(certificateDer: Uint8Array): void {
  const untrusted = (reason: string, cause?: unknown): EsignError =>
    new EsignError(
      'TSA_CERT_UNTRUSTED',
      `The timestamp authority's certificate is not a timestamping certificate: ${reason}.`,
      {
        hint: 'Check the TSA URL: the service answering is not a proper timestamp authority.',
        cause,
      },
    );
  let purposes: string[];
  try {
    const extension = readCertificate(certificateDer).extensions.find((candidate) => candidate.oid === OID.extKeyUsage);
    if (extension === undefined) throw untrusted('it has no extended key usage extension');
    if (!extension.critical) throw untrusted('its extended key usage extension is not critical');
    purposes = sequenceItems(decode(extension.value, 'extKeyUsage'), 'extKeyUsage').map((item) =>
      oid(item, 'KeyPurposeId'),
    );
  } catch (error) {
    if (isEsignError(error)) throw error;
    throw untrusted('it cannot be read', error);
  }
  if (purposes.length !== 1 || purposes[0] !== OID.kpTimeStamping) {
    throw untrusted(`its extended key usage is ${purposes.join(', ')}, not only id-kp-timeStamping`);
  }
}

export interface ExpectedTimestamp {
  /** The imprint that was sent. */
  imprint: Uint8Array;
  /** Its hash algorithm OID; SHA-256 when absent. */
  hashAlgorithm?: string;
  /** The nonce that was sent (big-endian magnitude); absent when none was. */
  nonce?: Uint8Array;
  /** Required TSA policy; default the service's `0.4.0.2023.1.1`; `null` accepts any. */
  policy?: string | null;
  /** When given, the TSA certificate must chain to one of these (checked at genTime). */
  trustAnchors?: Uint8Array[];
}

export interface ProcessedTimeStampResp {
  /** 0 granted or 1 grantedWithMods. */
  status: number;
  /** DER of the TimeStampToken. */
  token: Uint8Array;
  tstInfo: TstInfo;
  signerCertificate: Uint8Array | undefined;
  certificates: Uint8Array[];
  /** The token's certificates, the TSA's first. */
  chain: Uint8Array[];
}

/**
 * Validates a DER TimeStampResp against the request that produced it: status, message imprint,
 * nonce, policy, the token's signature and the TSA certificate's usage (and chain, with trust
 * anchors). Every failure is an EsignError with a `TSA_*` code.
 */
export function processTimeStampResp(der: Uint8Array, expected: ExpectedTimestamp): ProcessedTimeStampResp {
  const { status, statusString, failInfo, tokenDer } = readTimeStampResp(der);
  if (status !== PKIStatus.granted && status !== PKIStatus.grantedWithMods)
    throw rejection(status, statusString, failInfo);
  if (tokenDer === undefined) throw badResponse(`status ${status} but no timeStampToken`);

  let token: ParsedTimeStampToken;
  try {
    token = parseTimeStampToken(tokenDer);
  } catch (error) {
    if (isEsignError(error, 'CMS_BAD_STRUCTURE')) throw badResponse(error.message.replace(/\.$/, ''), error);
    throw error;
  }
  const { tstInfo } = token;
  if (tstInfo.version !== 1) throw badResponse(`TSTInfo version ${tstInfo.version}, expected 1`);
  if (
    tstInfo.messageImprint.hashAlgorithm !== (expected.hashAlgorithm ?? OID.sha256) ||
    !bytesEqual(tstInfo.messageImprint.hashedMessage, expected.imprint)
  ) {
    throw new EsignError(
      'TSA_IMPRINT_MISMATCH',
      'The timestamp token is for different data than was sent (message imprint mismatch).',
      {
        hint: 'The timestamp authority answered for another request; try again.',
        details: { expected: hex(expected.imprint), received: hex(tstInfo.messageImprint.hashedMessage) },
      },
    );
  }
  const expectedNonce = expected.nonce === undefined ? undefined : magnitudeHex(expected.nonce);
  if (tstInfo.nonce !== expectedNonce) {
    throw new EsignError('TSA_NONCE_MISMATCH', 'The timestamp token does not echo the nonce that was sent.', {
      hint: 'A stale or replayed response; try again.',
      details: { expected: expectedNonce ?? null, received: tstInfo.nonce ?? null },
    });
  }
  const policy = expected.policy === undefined ? TSA_POLICY : expected.policy;
  if (policy !== null && tstInfo.policy !== policy) {
    throw new EsignError(
      'TSA_POLICY_MISMATCH',
      `The timestamp token was issued under policy ${tstInfo.policy}, not ${policy}.`,
      {
        hint: 'Check the TSA URL, or set tsaPolicy (ESIGN_TSA_POLICY) to the policy this TSA issues under, or to any.',
        details: { expected: policy, received: tstInfo.policy },
      },
    );
  }
  verifyTimeStampTokenSignature(token);
  const signer = token.signerCertificate as Uint8Array;
  const chain = [signer, ...token.certificates.filter((certificate) => !bytesEqual(certificate, signer))];
  if (expected.trustAnchors !== undefined) verifyTsaCertificate(chain, expected.trustAnchors, tstInfo.genTime);
  else checkTimeStampingUsage(signer);
  return {
    status,
    token: tokenDer,
    tstInfo,
    signerCertificate: token.signerCertificate,
    certificates: token.certificates,
    chain,
  };
}

export interface RawTimeStampResp {
  status: number;
  statusString: string | undefined;
  /** Names of the PKIFailureInfo bits set. */
  failInfo: string[];
  tokenDer: Uint8Array | undefined;
}

/** Reads the outer TimeStampResp without checking anything; undecodable input is `TSA_BAD_RESPONSE`. */
export function readTimeStampResp(der: Uint8Array): RawTimeStampResp {
  try {
    const [statusInfo, token, extra] = sequenceItems(decode(der, 'TimeStampResp'), 'TimeStampResp');
    if (extra !== undefined) throw new Asn1StructureError('TimeStampResp: unexpected field');
    const [statusBlock, ...rest] = sequenceItems(statusInfo, 'PKIStatusInfo');
    let statusString: string | undefined;
    let failInfo: string[] = [];
    for (const field of rest) {
      if (isUniversalSequence(field))
        statusString = sequenceItems(field, 'statusString')
          .map((text) => stringValue(text, 'statusString'))
          .join(' ');
      else failInfo = decodeFailureInfo(bitStringValue(field, 'failInfo').bytes);
    }
    return {
      status: Number(integerValue(statusBlock, 'status')),
      statusString,
      failInfo,
      tokenDer: token === undefined ? undefined : Uint8Array.from(encoded(token)),
    };
  } catch (error) {
    if (error instanceof Asn1StructureError) throw badResponse(error.message, error);
    throw error;
  }
}

function isUniversalSequence(block: Block): boolean {
  return isUniversal(block, 16);
}

/** What a PKIStatus other than granted says when the TSA gives no failure bits (RFC 3161 §2.4.2). */
const STATUS_WITHOUT_REASON: Readonly<Record<number, string>> = {
  [PKIStatus.rejection]: 'rejection, without a reason',
  [PKIStatus.waiting]: 'the request is waiting (esign does not poll)',
  [PKIStatus.revocationWarning]: 'revocationWarning: a revocation of the TSA certificate is imminent',
  [PKIStatus.revocationNotification]: 'revocationNotification: the TSA certificate has been revoked',
};

/** The TSA_REJECTED error for a PKIStatus other than granted, naming every failure bit in plain English. */
export function rejection(status: number, statusString: string | undefined, failInfo: string[]): EsignError {
  const reasons = failInfo.map(
    (name) => `${FAILURE_INFO_TEXT[name as FailureInfoName] ?? 'unknown failure'} (${name})`,
  );
  const what =
    reasons.length > 0
      ? reasons.join('; ')
      : (STATUS_WITHOUT_REASON[status] ?? `PKIStatus ${status}, which RFC 3161 does not define`);
  const retryable = failInfo.includes('timeNotAvailable');
  const hint = retryable
    ? 'This is temporary; try again in a moment.'
    : failInfo.includes('systemFailure')
      ? 'The timestamp authority has an internal problem; try again later or use another TSA URL.'
      : 'Check the TSA URL and its policy: esign asks for policy 0.4.0.2023.1.1 unless tsaPolicy (ESIGN_TSA_POLICY) names another, or any.';
  return new EsignError(
    'TSA_REJECTED',
    `The timestamp authority rejected the request: ${what}${statusString ? ` ("${statusString}")` : ''}.`,
    {
      hint,
      details: { status, failInfo, statusString: statusString ?? null, retryable },
    },
  );
}

function badResponse(reason: string, cause?: unknown): EsignError {
  return new EsignError(
    'TSA_BAD_RESPONSE',
    `The timestamp authority's answer is not a valid TimeStampResp: ${reason}.`,
    {
      hint: 'Check that the TSA URL points at an RFC 3161 endpoint.',
      cause,
    },
  );
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
