/**
 * A timestamp token's own signature as verification judges it: with verification's table of
 * algorithms (algorithms.ts), so that a token signed over SHA-1 is reported weak and one under an
 * algorithm esign does not implement is reported as such, never as a token that is not validly
 * signed. The TSA client (src/core/tsp/response.ts) keeps its strict check of the tokens it asks for.
 */
import { X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { OID } from '../cms/oids.js';
import { bytesEqual } from '../cms/parse.js';
import { checkSigningCertificate } from '../cms/verify-signer.js';
import type { ParsedTimeStampToken } from '../tsp/response.js';
import { createDigest, digestAlgorithm, keyWeakness, signatureScheme, UNSUPPORTED, verifyWith } from './algorithms.js';

export interface TokenSignatureCheck {
  /** Each phrased "The timestamp token is not validly signed: …", or naming what esign does not implement. */
  problems: string[];
  /** Intact and validly signed, with an algorithm no longer acceptable. */
  weak: string[];
}

const NOT_VALIDLY_SIGNED = 'The timestamp token is not validly signed';

/** node:crypto's name of a digest OID, as far as verification knows digests. */
export function verificationHashName(oid: string): string | undefined {
  const digest = digestAlgorithm(oid);
  return digest && digest.outputLength === undefined ? digest.hash : undefined;
}

export function checkTokenSignature(token: ParsedTimeStampToken): TokenSignatureCheck {
  const { signedData } = token;
  const problems: string[] = [];
  const weak: string[] = [];
  const broken = (reason: string): TokenSignatureCheck => ({
    problems: [...problems, `${NOT_VALIDLY_SIGNED}: ${reason}`],
    weak,
  });
  const certificate = signedData.signerCertificate;
  if (certificate === undefined) return broken('it does not carry the TSA certificate');
  const attributes = signedData.signedAttributes;
  if (attributes === undefined) return broken('the SignerInfo has no signed attributes');
  if (attributes.contentType !== OID.tstInfo) return broken('the content-type attribute is not id-ct-TSTInfo');
  const digest = digestAlgorithm(
    signedData.digestAlgorithm,
    signedData.digestAlgorithmParameters,
    signedData.signatureAlgorithm,
  );
  if (digest === undefined)
    return { problems: [`${UNSUPPORTED} the token's digest algorithm ${signedData.digestAlgorithm}`], weak };
  if (digest.weakness) weak.push(`the token is signed over ${digest.name}: ${digest.weakness}`);
  const tstInfo = signedData.encapContent ?? new Uint8Array();
  const claimed = attributes.messageDigest;
  if (claimed === undefined) return broken('the message-digest attribute is missing');
  if (!bytesEqual(claimed, new Uint8Array(createDigest(digest).update(tstInfo).digest())))
    return broken('the message-digest attribute does not match the content');
  const ess = checkSigningCertificate(signedData, certificate, verificationHashName);
  if (ess === 'absent') return broken('the signing-certificate attribute is missing');
  if (ess !== undefined) return broken(ess);
  const scheme = signatureScheme(signedData.signatureAlgorithm, signedData.signatureAlgorithmParameters, digest);
  if ('unsupported' in scheme) return { problems: [`the timestamp token: ${scheme.unsupported}`], weak };
  if (scheme.weakness && !weak.some((entry) => entry.endsWith(scheme.weakness!)))
    weak.push(`the token is signed with ${scheme.name}: ${scheme.weakness}`);
  let key: KeyObject;
  try {
    key = new X509Certificate(certificate).publicKey;
  } catch (error) {
    return broken(`the TSA certificate cannot be read (${(error as Error).message})`);
  }
  const short = keyWeakness(key);
  if (short) weak.push(`the TSA's key: ${short}`);
  if (!verifyWith(scheme, attributes.der, key, signedData.signatureValue))
    return broken('the signature over the signed attributes does not verify with the signer certificate');
  return { problems, weak };
}
