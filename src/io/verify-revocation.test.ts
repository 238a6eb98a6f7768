/**
 * The revocation status a file does not hold, asked for through the port (`OnlineRevocation` over a
 * RevocationFetcher that answers as the sandbox PKI's endpoints do, in memory): OCSP, then the CRL,
 * each certificate once per run, failures named; and the core's judgement of what comes back
 * (TRY_LATER, REVOCATION_OUT_OF_BOUNDS_NO_POE, revoked, soft-fail). Over real HTTP:
 * test/integration/revocation.test.ts.
 */
import { createHash, sign } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EsignError } from '../core/errors.js';
import { buildSignedAttributes } from '../core/cms/signed-attributes.js';
import { buildSignedData } from '../core/cms/signed-data.js';
import { buildOcspRequest, certificateFacts, type RevocationFetcher } from '../core/ltv/index.js';
import { verifyCades } from '../core/verify/cades.js';
import type { RevocationPolicy, SignatureReport } from '../core/verify/types.js';
import { loadOrCreatePki, pkiUrls, type SandboxCredential, type SandboxPki } from '../sandbox/pki.js';
import { buildCrl, buildOcspResponse } from '../sandbox/pki-routes.js';
import { RevocationDiskCache } from './revocation-disk-cache.js';
import { OFFLINE_NOTHING_CACHED, OnlineRevocation } from './verify-revocation.js';

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

describe('the on-disk revocation cache: answers kept across runs while fresh, checked as fetched ones are', () => {
  let cacheRoot: string;
  let run = 0;
  beforeAll(async () => {
    cacheRoot = await mkdtemp(join(tmpdir(), 'esign-revocation-cache-'));
  });
  afterAll(() => rm(cacheRoot, { recursive: true, force: true }));
  /** A fresh cache directory per test. */
  const freshDisk = (options: { maxBytes?: number } = {}) =>
    new RevocationDiskCache(join(cacheRoot, `run-${++run}`, 'revocation'), options);
  const alice = () => credential('alice-rsa2048');
  const ocspEntry = (disk: RevocationDiskCache, signer = alice()) =>
    disk.pathOf('ocsp', urls.ocsp, ocspRequestOf(signer));
  const ocspRequestOf = (signer: SandboxCredential) =>
    buildOcspRequest(certificateFacts(signer.signer.certificate), certificateFacts(pki.issuingCa.certificate));

  it('a second run (a new OnlineRevocation) asks nothing: every answer from the cache, marked cached; files 0600 in a 0700 dir', async () => {
    const disk = freshDisk();
    const first = fetcher();
    const fetched = await verify(alice(), { mode: 'hard', source: new OnlineRevocation(first, { disk }) });
    expect(first.calls).toEqual([`ocsp ${urls.ocsp}`, `crl ${urls.rootCrl}`]);
    expect(fetched.chain!.revocation[0]).not.toHaveProperty('cached');
    const second = fetcher();
    const cached = await verify(alice(), { mode: 'hard', source: new OnlineRevocation(second, { disk }) });
    expect(second.calls).toEqual([]);
    expect(cached).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect(cached.chain!.revocation).toMatchObject([
      { status: 'good', source: 'fetched-ocsp', url: urls.ocsp, cached: expect.stringMatching(/^\d{4}-.*Z$/) },
      { status: 'good', source: 'fetched-crl', url: urls.rootCrl, cached: expect.any(String) },
      { source: 'trust-anchor' },
    ]);
    expect((await stat(disk.dir)).mode & 0o777).toBe(0o700);
    const names = await readdir(disk.dir);
    expect(names).toHaveLength(2);
    for (const name of names) expect((await stat(join(disk.dir, name))).mode & 0o777).toBe(0o600);
  });

  it('--offline (no fetcher) reads the cache: a cached answer establishes the status, none gives TRY_LATER naming the cache', async () => {
    const disk = freshDisk();
    const empty = await verify(alice(), { mode: 'hard', source: new OnlineRevocation(undefined, { disk }) });
    expect(empty).toMatchObject({ status: 'revocation-unknown', subIndication: 'TRY_LATER' });
    expect(empty.chain!.revocation[0]!.unestablished!.reason).toBe(OFFLINE_NOTHING_CACHED);
    await verify(alice(), { mode: 'hard', source: new OnlineRevocation(fetcher(), { disk }) });
    const offline = await verify(alice(), { mode: 'hard', source: new OnlineRevocation(undefined, { disk }) });
    expect(offline).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect(offline.chain!.revocation[0]).toMatchObject({ source: 'fetched-ocsp', cached: expect.any(String) });
  });

  it('an answer past its nextUpdate is fetched again (and not used offline)', async () => {
    const disk = freshDisk();
    await verify(alice(), { mode: 'hard', source: new OnlineRevocation(fetcher(), { disk }) });
    // The sandbox's answers are good for a day (OCSP) and a week (CRL): two days on, the OCSP one is stale.
    const later = () => new Date(Date.now() + 2 * 86_400_000);
    const offline = await verify(alice(), {
      mode: 'hard',
      source: new OnlineRevocation(undefined, { disk, now: later }),
    });
    expect(offline.chain!.revocation[0]).toMatchObject({ status: 'unknown', source: 'none' });
    await verify(alice(), { mode: 'hard', source: new OnlineRevocation(fetcher(), { disk }) });
    const network = fetcher();
    await verify(alice(), { mode: 'hard', source: new OnlineRevocation(network, { disk, now: later }) });
    expect(network.calls).toEqual([`ocsp ${urls.ocsp}`]);
  });

  it('a corrupt entry (garbage, truncated, another URL’s, a forged answer) is ignored and replaced, never an error', async () => {
    for (const corrupt of [
      'not json',
      (text: string) => text.slice(0, text.length / 2),
      (text: string) => text.replace(urls.ocsp, `${urls.ocsp}x`),
      // Another responder's answer at that URL: well formed, but not signed by one the issuer authorized.
      (text: string) => {
        const entry = JSON.parse(text) as { der: string };
        const der = Buffer.from(entry.der, 'base64');
        der.writeUInt8(der.readUInt8(der.length - 5) ^ 0xff, der.length - 5); // a byte of the signature
        return JSON.stringify({ ...entry, der: der.toString('base64') });
      },
    ]) {
      const disk = freshDisk();
      await verify(alice(), { mode: 'hard', source: new OnlineRevocation(fetcher(), { disk }) });
      const path = ocspEntry(disk);
      const good = await readFile(path, 'utf8');
      await writeFile(path, typeof corrupt === 'string' ? corrupt : corrupt(good));
      const network = fetcher();
      const signature = await verify(alice(), { mode: 'hard', source: new OnlineRevocation(network, { disk }) });
      expect(signature).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
      expect(signature.chain!.revocation[0]).not.toHaveProperty('cached');
      expect(network.calls).toEqual([`ocsp ${urls.ocsp}`]);
      const replaced = JSON.parse(await readFile(path, 'utf8')) as { url: string; der: string };
      expect(replaced.url).toBe(urls.ocsp);
      expect(Buffer.from(replaced.der, 'base64')[0]).toBe(0x30);
    }
  });

  it('stays within its size bound: the oldest entries go first', async () => {
    const disk = freshDisk({ maxBytes: 12_000 });
    const signers = pki.credentials.filter((c) => c.statusReason === undefined).slice(0, 8);
    for (const signer of signers)
      await verify(signer, { mode: 'hard', source: new OnlineRevocation(fetcher(), { disk }) });
    const names = await readdir(disk.dir);
    const sizes = await Promise.all(names.map(async (name) => (await stat(join(disk.dir, name))).size));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(12_000);
    expect(names.length).toBeLessThan(signers.length + 1);
    // The newest answer is kept.
    expect(names).toContain(basename(ocspEntry(disk, signers.at(-1)!)));
  });
});
