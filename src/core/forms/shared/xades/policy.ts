/**
 * `--signature-policy`: a named preset, or `OID,URL,ALG:HASH` (the policy's OID, where its document
 * is, and the digest of that document, base64). Either makes the signature XAdES-EPES.
 */
import type { SignaturePolicy } from '../../../documents.js';
import { EsignError } from '../../../errors.js';

/**
 * Spain's FacturaE signature policy 3.1, as the Spanish administration publishes it (the policy
 * document's URL is its identifier; SHA-1 of the PDF), with the role and DataObjectFormat it asks
 * for: the issuer (`emisor`) signs, the invoice described with the FacturaE object identifier.
 */
export const FACTURAE_3_1: SignaturePolicy = {
  identifier: 'http://www.facturae.es/politica_de_firma_formato_facturae/politica_de_firma_formato_facturae_v3_1.pdf',
  description: 'Política de Firma FacturaE v3.1',
  hashAlgorithm: 'sha1',
  hashBase64: 'Ohixl6upD6av8N7pEvDABhEL6hM=',
  url: 'http://www.facturae.es/politica_de_firma_formato_facturae/politica_de_firma_formato_facturae_v3_1.pdf',
  claimedRole: { role: 'emisor', element: 'SignerRole' },
  dataObject: { description: 'Factura electrónica', objectIdentifier: 'urn:oid:1.2.840.10003.5.109.10' },
};

export const POLICY_PRESETS: Readonly<Record<string, SignaturePolicy>> = { 'facturae-3.1': FACTURAE_3_1 };

const HASH_BYTES = { sha1: 20, sha256: 32, sha384: 48, sha512: 64 } as const;

const usage = (text: string, why: string) =>
  new EsignError('USAGE', `--signature-policy ${JSON.stringify(text)}: ${why}.`, {
    hint: `Name a preset (${Object.keys(POLICY_PRESETS).join(', ')}) or give OID,URL,ALG:HASH, e.g. 1.2.3.4,https://example.org/policy.pdf,sha256:BASE64.`,
  });

/** The policy `--signature-policy` names. */
export function parseSignaturePolicy(text: string): SignaturePolicy {
  const preset = POLICY_PRESETS[text.toLowerCase()];
  if (preset) return preset;
  const parts = text.split(',');
  if (parts.length !== 3) throw usage(text, 'not a preset, nor OID,URL,ALG:HASH');
  const [oid, url, hash] = parts.map((part) => part.trim()) as [string, string, string];
  if (!/^[0-2](\.\d+)+$/.test(oid)) throw usage(text, `${JSON.stringify(oid)} is not an OID`);
  if (!/^https?:\/\/\S+$/.test(url)) throw usage(text, `${JSON.stringify(url)} is not an http(s) URL`);
  const match = /^(sha1|sha256|sha384|sha512):([A-Za-z0-9+/=]+)$/i.exec(hash);
  if (!match) throw usage(text, 'the hash is not ALG:BASE64 (sha1, sha256, sha384 or sha512)');
  const algorithm = match[1]!.toLowerCase() as keyof typeof HASH_BYTES;
  if (Buffer.from(match[2]!, 'base64').length !== HASH_BYTES[algorithm])
    throw usage(text, `the hash is not ${HASH_BYTES[algorithm]} bytes of base64, as ${algorithm} gives`);
  return { identifier: `urn:oid:${oid}`, hashAlgorithm: algorithm, hashBase64: match[2]!, url };
}
