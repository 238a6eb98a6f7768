/**
 * The revocation status a file does not hold, asked for through the port (`OnlineRevocation` over a
 * RevocationFetcher that answers as the sandbox PKI's endpoints do, in memory): OCSP, then the CRL,
 * each certificate once per run, failures named; and the core's judgement of what comes back
 * (TRY_LATER, REVOCATION_OUT_OF_BOUNDS_NO_POE, revoked, soft-fail). Over real HTTP:
 * test/integration/revocation.test.ts.
 */
import { createHash, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EsignError } from '../core/errors.js';
import { buildSignedAttributes } from '../core/cms/signed-attributes.js';
import { buildSignedData } from '../core/cms/signed-data.js';
import type { RevocationFetcher } from '../core/ltv/index.js';
import { verifyCades } from '../core/verify/cades.js';
import type { RevocationPolicy, SignatureReport } from '../core/verify/types.js';
import { loadOrCreatePki, pkiUrls, type SandboxCredential, type SandboxPki } from '../sandbox/pki.js';
import { buildCrl, buildOcspResponse } from '../sandbox/pki-routes.js';
import { OnlineRevocation } from './verify-revocation.js';

const BASE = 'http://127.0.0.1:9/pki';
const NOW = new Date();
const urls = pkiUrls(BASE);
let pki: SandboxPki;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-verify-revocation-'));
  pki = await loadOrCreatePki(dir, { baseUrl: BASE, now: NOW });
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const credential = (id: string): SandboxCredential => pki.credentials.find((c) => c.credentialID === id)!;
const down = (url: string) =>
  new EsignError('REVOCATION_UNAVAILABLE', `No revocation data from the service at ${url}: it is down.`);

/** The sandbox PKI's endpoints in memory, counting calls; `fail` names URLs that are down. */
function fetcher(fail: string[] = []): RevocationFetcher & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    ocsp: async (url, request) => {
      calls.push(`ocsp ${url}`);
      if (fail.includes(url)) throw down(url);
      return buildOcspResponse(pki, request, new Date());
    },
    crl: async (url) => {
      calls.push(`crl ${url}`);
      if (fail.includes(url)) throw down(url);
      return buildCrl(pki, new Date(), url === urls.rootCrl ? 'root' : 'issuing');
    },
    certificate: async (url) => {
      throw down(url);
    },
  };
}

const content = new TextEncoder().encode('revocation, fetched\n');

/** A CAdES by the credential's key, its chain in the SignedData, no revocation data, no timestamp. */
function p7s(signer: SandboxCredential): Uint8Array {
  const attributes = buildSignedAttributes({
    contentDigest: new Uint8Array(createHash('sha256').update(content).digest()),
    signerCertificate: signer.chain[0]!,
  }).der;
  return buildSignedData({
    signedAttributesDer: attributes,
    signatureValue: new Uint8Array(sign('sha256', attributes, signer.signer.privateKey)),
    certificates: signer.chain,
  });
}

async function verify(signer: SandboxCredential, revocation?: RevocationPolicy): Promise<SignatureReport> {
  const report = await verifyCades(p7s(signer), 'x.p7s', async (consume) => consume(content), {
    trustAnchors: [pki.root.certificate],
    now: new Date(),
    ...(revocation ? { revocation } : {}),
  });
  return report.signatures[0]!;
}

describe('OnlineRevocation: OCSP, then the CRL, once per certificate per run', () => {
  it('asks the signer’s OCSP responder once however often it is asked, and the root’s CRL for the issuing CA', async () => {
    const network = fetcher();
    const source = new OnlineRevocation(network);
    const alice = credential('alice-rsa2048');
    const first = await verify(alice, { mode: 'hard', source });
    const second = await verify(alice, { mode: 'hard', source });
    for (const signature of [first, second]) {
      expect(signature).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
      expect(signature.chain!.revocation).toMatchObject([
        { status: 'good', source: 'fetched-ocsp', url: urls.ocsp },
        { status: 'good', source: 'fetched-crl', url: urls.rootCrl },
        { source: 'trust-anchor' },
      ]);
    }
    expect(network.calls).toEqual([`ocsp ${urls.ocsp}`, `crl ${urls.rootCrl}`]);
  });

  it('a responder that is down: the CRL stands in', async () => {
    const network = fetcher([urls.ocsp]);
    const signature = await verify(credential('alice-rsa2048'), {
      mode: 'hard',
      source: new OnlineRevocation(network),
    });
    expect(signature).toMatchObject({ status: 'valid' });
    expect(signature.chain!.revocation[0]).toMatchObject({ status: 'good', source: 'fetched-crl', url: urls.crl });
  });

  it('the responder and the CRL down: INDETERMINATE/TRY_LATER naming both URLs; soft-fail passes it with a warning', async () => {
    const alice = credential('alice-rsa2048');
    const hard = await verify(alice, { mode: 'hard', source: new OnlineRevocation(fetcher([urls.ocsp, urls.crl])) });
    expect(hard).toMatchObject({
      status: 'revocation-unknown',
      code: 'VERIFY_REVOCATION_UNKNOWN',
      indication: 'INDETERMINATE',
      subIndication: 'TRY_LATER',
    });
    const reason = hard.chain!.revocation[0]!.unestablished!.reason;
    expect(reason).toContain(urls.ocsp);
    expect(reason).toContain(urls.crl);
    const soft = await verify(alice, {
      mode: 'soft-fail',
      source: new OnlineRevocation(fetcher([urls.ocsp, urls.crl])),
    });
    expect(soft).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect(soft.warnings).toEqual([expect.stringMatching(/not established: .*passed under --revocation soft-fail/)]);
  });

  it('no source (--offline) and the default policy: TRY_LATER, nothing asked', async () => {
    for (const policy of [{ mode: 'hard' } as const, undefined]) {
      const signature = await verify(credential('alice-rsa2048'), policy);
      expect(signature).toMatchObject({ status: 'revocation-unknown', subIndication: 'TRY_LATER' });
      expect(signature.chain!.revocation[0]!.unestablished!.reason).toMatch(/--offline fetches none/);
    }
  });

  it('a revoked signer, asked for: TOTAL-FAILED or INDETERMINATE as before (REVOKED_NO_POE without a timestamp), soft-fail or not', async () => {
    for (const mode of ['hard', 'soft-fail'] as const) {
      const signature = await verify(credential('alice-revoked'), {
        mode,
        source: new OnlineRevocation(fetcher()),
      });
      expect(signature).toMatchObject({ status: 'invalid', code: 'VERIFY_FAILED', subIndication: 'REVOKED_NO_POE' });
      expect(signature.chain!.revocation[0]).toMatchObject({ status: 'revoked', source: 'fetched-ocsp' });
    }
  });

  it('a good answer issued after the certificate expired: REVOCATION_OUT_OF_BOUNDS_NO_POE on that certificate', async () => {
    const expired = pki.credentials.find((c) => c.statusReason === 'certificate expired')!;
    const signature = await verify(expired, { mode: 'hard', source: new OnlineRevocation(fetcher()) });
    expect(signature.chain!.revocation[0]).toMatchObject({
      status: 'good',
      unestablished: { subIndication: 'REVOCATION_OUT_OF_BOUNDS_NO_POE' },
    });
    // The expired signer with no proof of existence is what fails it first.
    expect(signature.subIndication).toBe('OUT_OF_BOUNDS_NO_POE');
  });
});
