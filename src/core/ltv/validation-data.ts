/**
 * The validation data a PAdES B-LT document carries in its DSS: for every signature, the signer's
 * chain and the chain of the TSA of its signature timestamp, and for every document timestamp the
 * TSA's chain; for each certificate of those chains except the trust anchor, an OCSP response
 * (AIA) and the CRL (CRL distribution point) of its issuer. Fetching goes through a port.
 */
import { itemDigest as hex } from './item-digest.js';
import { parseTimeStampToken } from '../tsp/response.js';
import { EsignError, isEsignError } from '../errors.js';
import { certificateFacts, displayName, isIssuedBy } from './certificates.js';
import type { CertificateFacts } from './certificates.js';
import { checkCrl } from './crl.js';
import type { CheckedCrl } from './crl.js';
import { buildOcspRequest, checkOcspResponse } from './ocsp.js';
import type { CheckedOcspResponse } from './ocsp.js';
import type { ChainTarget } from './chain-target.js';
import type { PdfSignature } from './pdf-signatures.js';

/** The network side: each call returns the DER body or throws an EsignError naming the URL. */
export interface RevocationFetcher {
  ocsp(url: string, request: Uint8Array): Promise<Uint8Array>;
  crl(url: string): Promise<Uint8Array>;
  certificate(url: string): Promise<Uint8Array>;
}

export type { ChainTarget };

export interface RevocationCheck {
  subject: string;
  serialNumber: string;
  source: 'ocsp' | 'crl';
  url: string;
  status: 'good' | 'revoked' | 'unknown';
}

export interface ValidationData {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
  checks: RevocationCheck[];
  /** Certificates for which no revocation source is published, and similar gaps. */
  warnings: string[];
}

/** The chains to validate for the given signatures and document timestamps. */
export function targetsOf(signatures: readonly PdfSignature[]): ChainTarget[] {
  const targets: ChainTarget[] = [];
  for (const signature of signatures) {
    if (signature.timestampTarget) {
      const leaf = signature.signerCertificate ?? signature.certificates[0];
      if (leaf)
        targets.push({ role: 'signer', leaf, pool: signature.certificates, usedAt: signature.timestampTarget.usedAt });
      targets.push(signature.timestampTarget);
      continue;
    }
    const token = signature.kind === 'docTimeStamp' ? signature.cms : signature.timestampToken;
    const parsedToken = token ? parseTimeStampToken(token) : undefined;
    if (signature.kind === 'signature') {
      const leaf = signature.signerCertificate ?? signature.certificates[0];
      if (leaf)
        targets.push({ role: 'signer', leaf, pool: signature.certificates, usedAt: parsedToken?.tstInfo.genTime });
    }
    if (parsedToken) {
      const leaf = parsedToken.signerCertificate ?? parsedToken.certificates[0];
      if (leaf)
        targets.push({ role: 'tsa', leaf, pool: parsedToken.certificates, usedAt: parsedToken.tstInfo.genTime });
    }
  }
  return targets;
}

/**
 * The certificates of a timestamp token as a target (for the DSS after a new document timestamp):
 * as the TSA client read them (`read`, the TSA's first), else parsed from the token.
 */
export function tokenTarget(token: Uint8Array, read?: { certificates?: Uint8Array[]; genTime?: Date }): ChainTarget[] {
  const certificates = read?.certificates;
  if (certificates?.[0]) return [{ role: 'tsa', leaf: certificates[0], pool: certificates, usedAt: read?.genTime }];
  const parsed = parseTimeStampToken(token);
  const leaf = parsed.signerCertificate ?? parsed.certificates[0];
  return leaf ? [{ role: 'tsa', leaf, pool: parsed.certificates, usedAt: parsed.tstInfo.genTime }] : [];
}

const MAX_CHAIN = 10;

export interface RevocationCacheOptions {
  /** The clock: an OCSP response or CRL whose nextUpdate has passed is fetched again. */
  now?: () => Date;
  /**
   * The latest time the window's certificates were relied on (its last signature timestamp): an
   * OCSP response produced before it is asked for once more, so that validators checking
   * freshness find revocation data issued after the signatures it covers.
   */
  issuedAfter?: Date;
}

/**
 * What one batch window knows of certificates: each parsed once, each issuer found once, each OCSP
 * response and CRL fetched and checked once, shared by all documents of the window (failures too,
 * so a responder that is down costs the window one wait, not one per file). It holds certificates
 * and revocation data only, never document bytes, and lives as long as its window.
 */
export class RevocationCache {
  private readonly facts = new Map<string, CertificateFacts>();
  private readonly issuers = new Map<string, Promise<CertificateFacts | undefined>>();
  private readonly ocsps = new Map<string, Promise<CheckedOcspResponse>>();
  private readonly crls = new Map<string, Promise<CheckedCrl>>();

  constructor(
    readonly fetcher: RevocationFetcher,
    private readonly options: RevocationCacheOptions = {},
  ) {}

  certificate(der: Uint8Array): CertificateFacts {
    const key = hex(der);
    let facts = this.facts.get(key);
    if (!facts) {
      facts = certificateFacts(der);
      this.facts.set(key, facts);
    }
    return facts;
  }

  issuerOf(cert: CertificateFacts, pool: readonly CertificateFacts[]): Promise<CertificateFacts | undefined> {
    return memo(this.issuers, hex(cert.der), () =>
      findIssuer(cert, pool, (der) => this.certificate(der), this.fetcher),
    );
  }

  ocsp(cert: CertificateFacts, issuer: CertificateFacts, url: string): Promise<CheckedOcspResponse> {
    return this.fresh(this.ocsps, `${url} ${hex(cert.der)}`, async () => {
      const fetch = async (): Promise<CheckedOcspResponse> =>
        checkOcspResponse(await this.fetcher.ocsp(url, buildOcspRequest(cert, issuer)), cert, issuer, url);
      const first = await fetch();
      return this.issuedInTime(first.producedAt) ? first : fetch();
    });
  }

  crl(issuer: CertificateFacts, url: string): Promise<CheckedCrl> {
    return this.fresh(this.crls, `${url} ${hex(issuer.der)}`, async () =>
      checkCrl(await this.fetcher.crl(url), issuer, url),
    );
  }

  /** A memoized entry, fetched again once its nextUpdate has passed. */
  private async fresh<T extends { nextUpdate: Date | undefined }>(
    cache: Map<string, Promise<T>>,
    key: string,
    load: () => Promise<T>,
  ): Promise<T> {
    const pending = memo(cache, key, load);
    const value = await pending;
    const now = this.options.now?.();
    if (!now || !value.nextUpdate || value.nextUpdate > now) return value;
    if (cache.get(key) === pending) cache.delete(key);
    return memo(cache, key, load);
  }

  /** Whether a response was produced no earlier than the window's last use (to the second, as responders stamp). */
  private issuedInTime(producedAt: Date): boolean {
    const after = this.options.issuedAfter;
    return !after || Math.floor(producedAt.getTime() / 1000) >= Math.floor(after.getTime() / 1000);
  }
}

function memo<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let pending = cache.get(key);
  if (!pending) {
    pending = load();
    cache.set(key, pending);
    pending.catch(() => undefined);
  }
  return pending;
}

/**
 * Builds every chain (fetching missing issuers from caIssuers), then fetches and checks the
 * revocation data: OCSP where published, and the CRL where published (it stands in for an OCSP
 * responder that is down or answers garbage). A certificate revoked before it was relied on is
 * an error; so is a certificate whose revocation data cannot be had from any source it names.
 * `cache` is the window's (shared by its documents); without one, each call fetches afresh.
 */
export async function collectValidationData(
  targets: readonly ChainTarget[],
  fetcher: RevocationFetcher,
  extraPool: readonly Uint8Array[] = [],
  cache: RevocationCache = new RevocationCache(fetcher),
): Promise<ValidationData> {
  const pool = new Map<string, CertificateFacts>();
  const addToPool = (der: Uint8Array): CertificateFacts => {
    const facts = cache.certificate(der);
    pool.set(hex(facts.der), facts);
    return facts;
  };
  for (const der of extraPool) addToPool(der);
  for (const target of targets) for (const der of [target.leaf, ...target.pool]) addToPool(der);

  const warnings: string[] = [];
  const certs = new Map<string, Uint8Array>();
  /** Certificate (by hex) → its issuer, and the earliest time it was relied on. */
  const needs = new Map<
    string,
    { cert: CertificateFacts; issuer: CertificateFacts; usedAt: Date | undefined; role: ChainTarget['role'] }
  >();

  for (const target of targets) {
    let current = addToPool(target.leaf);
    for (let depth = 0; depth < MAX_CHAIN; depth++) {
      certs.set(hex(current.der), current.der);
      if (current.selfSigned) break;
      const issuer = await cache.issuerOf(current, [...pool.values()]);
      if (!issuer) {
        warnings.push(
          `The issuer of ${displayName(current)} is not in the document and cannot be fetched; its chain stops there.`,
        );
        break;
      }
      pool.set(hex(issuer.der), issuer);
      const key = hex(current.der);
      const need = needs.get(key);
      if (!need) needs.set(key, { cert: current, issuer, usedAt: target.usedAt, role: target.role });
      else if (target.usedAt && (!need.usedAt || target.usedAt < need.usedAt)) need.usedAt = target.usedAt;
      current = issuer;
    }
  }

  const ocsps: Uint8Array[] = [];
  const crls = new Map<string, Uint8Array>();
  const checks: RevocationCheck[] = [];
  for (const { cert, issuer, usedAt } of needs.values()) {
    if (cert.ocspNoCheck && cert.extendedKeyUsages.includes('1.3.6.1.5.5.7.3.9')) continue;
    if (cert.ocspUrls.length === 0 && cert.crlUrls.length === 0) {
      warnings.push(
        `${displayName(cert)} publishes no revocation information (no OCSP or CRL URL); the DSS holds only its certificate.`,
      );
      continue;
    }
    let ocspFailure: EsignError | undefined;
    for (const url of cert.ocspUrls.slice(0, 1)) {
      let checked: CheckedOcspResponse;
      try {
        checked = await cache.ocsp(cert, issuer, url);
      } catch (error) {
        // A CRL the certificate names stands in for a responder that is down, slow or answers garbage.
        if (
          cert.crlUrls.length === 0 ||
          !isEsignError(error) ||
          !/^REVOCATION_(UNAVAILABLE|BAD_RESPONSE)$/.test(error.code)
        )
          throw error;
        ocspFailure = error;
        warnings.push(`${error.message.replace(/\.$/, '')}; the CRL of ${displayName(issuer)} stands in for it.`);
        continue;
      }
      checks.push({
        subject: cert.subject,
        serialNumber: cert.serialNumber,
        source: 'ocsp',
        url,
        status: checked.status.kind,
      });
      if (checked.status.kind === 'revoked') refuseRevoked(cert, checked.status.revokedAt, usedAt, url);
      if (checked.status.kind === 'unknown') {
        warnings.push(
          `The OCSP responder ${url} does not know ${displayName(cert)} (status unknown); its answer is left out.`,
        );
        continue;
      }
      ocsps.push(checked.der);
      for (const responderCert of checked.certificates) certs.set(hex(responderCert), responderCert);
    }
    for (const url of cert.crlUrls.slice(0, 1)) {
      const checked = await cache.crl(issuer, url).catch((error: unknown) => {
        if (!ocspFailure || !isEsignError(error)) throw error;
        throw new EsignError(
          ocspFailure.code,
          `${ocspFailure.message.replace(/\.$/, '')}, and its CRL fallback failed too: ${error.message}`,
          { hint: ocspFailure.hint, cause: error, details: ocspFailure.details },
        );
      });
      crls.set(url, checked.der);
      const revokedAt = checked.revoked.get(cert.serialNumber);
      checks.push({
        subject: cert.subject,
        serialNumber: cert.serialNumber,
        source: 'crl',
        url,
        status: revokedAt ? 'revoked' : 'good',
      });
      if (revokedAt) refuseRevoked(cert, revokedAt, usedAt, url);
    }
  }
  return { certs: [...certs.values()], ocsps, crls: [...crls.values()], checks, warnings };
}

async function findIssuer(
  cert: CertificateFacts,
  pool: readonly CertificateFacts[],
  parse: (der: Uint8Array) => CertificateFacts,
  fetcher: RevocationFetcher,
): Promise<CertificateFacts | undefined> {
  for (const candidate of pool) if (candidate !== cert && isIssuedBy(cert, candidate)) return candidate;
  for (const url of cert.caIssuersUrls) {
    const der = await fetcher.certificate(url);
    let candidate: CertificateFacts;
    try {
      candidate = parse(der);
    } catch (error) {
      throw new EsignError(
        'REVOCATION_BAD_RESPONSE',
        `The issuer certificate at ${url} (for ${displayName(cert)}) is not a certificate.`,
        {
          hint: 'The caIssuers URL serves something else; ask the CA.',
          cause: error,
          details: { url },
        },
      );
    }
    if (isIssuedBy(cert, candidate)) return candidate;
  }
  return undefined;
}

function refuseRevoked(cert: CertificateFacts, revokedAt: Date, usedAt: Date | undefined, url: string): void {
  if (usedAt && revokedAt > usedAt) return;
  throw new EsignError(
    'REVOCATION_CERT_REVOKED',
    `The certificate of ${displayName(cert)} (serial ${cert.serialNumber}) was revoked on ${revokedAt.toISOString()}${usedAt ? `, before it was used (${usedAt.toISOString()})` : ''}; the signature cannot be extended to a long-term level.`,
    {
      hint: 'The signature is not valid; sign again with a valid certificate.',
      details: { url, serialNumber: cert.serialNumber, revokedAt: revokedAt.toISOString() },
    },
  );
}
