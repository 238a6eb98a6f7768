/**
 * The issuing side of RFC 3161: a TimeStampToken signed with a local key, and the TimeStampResp
 * around it. Used by the sandbox TSA and by tests; the client only reads these structures.
 */
import { createHash, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  bitString,
  derNull,
  objectIdentifier,
  octetString,
  sequence,
  setOf,
  smallInteger,
  utf8String,
} from '../cms/der.js';
import { OID } from '../cms/oids.js';
import { encodeSignedData } from '../cms/signed-data.js';
import { attribute, signingCertificateV2 } from '../cms/signed-attributes.js';
import { encodeFailureInfo } from './status.js';
import type { FailureInfoName } from './status.js';

export interface TimeStampTokenInput {
  /** DER TSTInfo, the encapsulated content. */
  tstInfo: Uint8Array;
  /** DER of the TSA certificate (named in the SignerInfo and the signing-certificate-v2 attribute). */
  signerCertificate: Uint8Array;
  privateKey: KeyObject;
  /** Certificates to include (the TSA certificate and chain when certReq was true, else none). */
  certificates: Uint8Array[];
}

/** Signs a TSTInfo into a TimeStampToken: SignedData, SHA-256, RSA PKCS#1 v1.5 or ECDSA by key type. */
export function buildTimeStampToken(input: TimeStampTokenInput): Uint8Array {
  const signedAttributesDer = setOf([
    attribute(OID.contentType, objectIdentifier(OID.tstInfo)),
    attribute(OID.messageDigest, octetString(new Uint8Array(createHash('sha256').update(input.tstInfo).digest()))),
    attribute(OID.signingCertificateV2, signingCertificateV2(input.signerCertificate)),
  ]);
  const ec = input.privateKey.asymmetricKeyType === 'ec';
  return encodeSignedData({
    eContentType: OID.tstInfo,
    eContent: input.tstInfo,
    certificates: input.certificates,
    signer: {
      certificate: input.signerCertificate,
      digestAlgorithm: OID.sha256,
      signedAttributesDer,
      signatureAlgorithm: ec
        ? sequence(objectIdentifier(OID.ecdsaWithSHA256))
        : sequence(objectIdentifier(OID.sha256WithRSAEncryption), derNull),
      signatureValue: new Uint8Array(sign('sha256', signedAttributesDer, input.privateKey)),
    },
  });
}

export interface TimeStampRespInput {
  status: number;
  statusString?: string;
  failInfo?: FailureInfoName[];
  /** DER TimeStampToken, only with status 0 or 1. */
  token?: Uint8Array;
}

/** Encodes a TimeStampResp: PKIStatusInfo, then the token when granted. */
export function buildTimeStampResp(input: TimeStampRespInput): Uint8Array {
  const failInfo = input.failInfo && input.failInfo.length > 0 ? encodeFailureInfo(input.failInfo) : undefined;
  const statusInfo = sequence(
    smallInteger(input.status),
    ...(input.statusString === undefined ? [] : [sequence(utf8String(input.statusString))]),
    ...(failInfo ? [bitString(failInfo.bytes, failInfo.unusedBits)] : []),
  );
  return sequence(statusInfo, ...(input.token ? [input.token] : []));
}
