/**
 * Revocation as EN 319 102-1 has it (issue 49, item 8): where a file holds no revocation data for a
 * certificate of a trusted chain, `esign verify` asks the certificate's OCSP responder, then its CRL
 * distribution point (the sandbox's, over real HTTP); `--offline` asks nothing, and a status not
 * established is INDETERMINATE/TRY_LATER (VERIFY_REVOCATION_UNKNOWN, exit 9) unless `--revocation
 * soft-fail`, which passes it and says so. The sandbox's responder and CRLs are judged by openssl.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildOcspRequest, certificateFacts } from '../../src/core/ltv/index.js';
import { encodeRevocationEntry, revocationCacheKey } from '../../src/core/ltv/revocation-cache-entry.js';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { derToPem, pkiUrls } from '../../src/sandbox/pki.js';
import { buildOcspResponse } from '../../src/sandbox/pki-routes.js';
import type { SandboxPki } from '../../src/sandbox/pki.js';
import { pdfLibBytes } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let pki: SandboxPki;
let signedPath: string;
let urls: ReturnType<typeof pkiUrls>;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  pki = sandbox.sandbox.pki;
  urls = pkiUrls(sandbox.sandbox.urls.pki);
  work = await tempDirForFile('esign-revocation-');
  const input = join(work.dir, 'input.pdf');
  await writeFile(input, await pdfLibBytes({ pages: 1 }));
  signedPath = join(work.dir, 'input-signed.pdf');
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', '-o', signedPath, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  for (const [name, der] of [
    ['root.pem', pki.root.certificate],
    ['issuing.pem', pki.issuingCa.certificate],
    ['alice.pem', credential('alice-rsa2048')],
    ['revoked.pem', credential('alice-revoked')],
    ['tsa.pem', pki.tsa.certificate],
  ] as const)
    await writeFile(join(work.dir, name), derToPem(der, 'CERTIFICATE'));
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});
afterEach(() => sandbox.sandbox.quirks.set([]));

function credential(id: string): Uint8Array {
  return pki.credentials.find((c) => c.credentialID === id)!.signer.certificate;
}

type Report = VerificationReport & { valid: boolean };

/** `esign verify` of the signed file; `cache` (ESIGN_CACHE_DIR) a revocation cache it shares, else a fresh one. */
async function verify(extra: string[], json = true, cache?: string) {
  const env = { ...sandbox.env, ESIGN_CACHE_DIR: cache ?? freshCache() };
  const result = await runCli([...(json ? ['--json'] : []), 'verify', ...extra, signedPath], { env });
  return { ...result, report: json ? result.json<Report>() : undefined };
}

let caches = 0;
/** A cache dir no run used yet: each test decides what its revocation cache holds. */
function freshCache(): string {
  return join(work.dir, `cache-${++caches}`);
}

const only = (report: Report | undefined): SignatureReport => report!.signatures[0]!;
const pkiCalls = (since: number) => sandbox.sandbox.requestLog.slice(since).filter((call) => call.startsWith('pki '));

/** openssl, run asynchronously: the sandbox answering it lives in this process. */
async function openssl(args: string[]): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)('openssl', args, { cwd: work.dir, encoding: 'utf8' });
  return stdout + stderr;
}

describe('the sandbox OCSP responder and CRLs answer as real ones do (openssl the judge)', () => {
  it('OCSP over POST: good, revoked, unknown for a serial it did not issue, unauthorized for another CA, the nonce echoed, a responder with ocsp-nocheck', async () => {
    const ask = (cert: string, issuer: string) =>
      openssl([
        'ocsp',
        '-issuer',
        issuer,
        '-cert',
        cert,
        '-url',
        urls.ocsp,
        '-CAfile',
        'root.pem',
        '-verify_other',
        'issuing.pem',
        '-nonce',
        '-resp_text',
      ]);
    const good = await ask('alice.pem', 'issuing.pem');
    expect(good).toMatch(/Response verify OK/);
    expect(good).toMatch(/alice\.pem: good/);
    expect(good).toMatch(/This Update: .*\n\s+Next Update: /);
    expect(good).toMatch(/OCSP Nonce:/);
    expect(good).toMatch(/OCSP No Check/);
    expect(await ask('revoked.pem', 'issuing.pem')).toMatch(/revoked\.pem: revoked/);
    // The TSA certificate is the root's: this responder (the issuing CA's) is not authoritative for it.
    const refused = await ask('tsa.pem', 'root.pem').catch(
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(refused).toMatch(/Responder Error: unauthorized \(6\)/);
    // A serial number of the issuing CA it never issued.
    const request = pkijs.OCSPRequest.fromBER(
      buildOcspRequest(certificateFacts(credential('alice-rsa2048')), certificateFacts(pki.issuingCa.certificate)),
    );
    request.tbsRequest.requestList[0]!.reqCert.serialNumber = new asn1js.Integer({ value: 424242 });
    const answer = await fetch(urls.ocsp, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: new Uint8Array(request.toSchema(true).toBER(false)),
    });
    const outer = pkijs.OCSPResponse.fromBER(new Uint8Array(await answer.arrayBuffer()));
    const basic = pkijs.BasicOCSPResponse.fromBER(outer.responseBytes!.response.valueBlock.valueHexView);
    expect(basic.tbsResponseData.responses[0]!.certStatus.idBlock.tagNumber).toBe(2); // unknown
  });

  it('OCSP answers POST as application/ocsp-request only: POST as another type is malformed', async () => {
    const request = buildOcspRequest(
      certificateFacts(credential('alice-rsa2048')),
      certificateFacts(pki.issuingCa.certificate),
    );
    const wrongType = await fetch(urls.ocsp, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: request,
    });
    const status = pkijs.OCSPResponse.fromBER(new Uint8Array(await wrongType.arrayBuffer())).responseStatus;
    expect(status.valueBlock.valueDec).toBe(1); // malformedRequest
  });

  it('CRLs: application/pkix-crl, signed by their CA, with nextUpdate, a CRL number and the revoked signer', async () => {
    const response = await fetch(urls.crl);
    expect(response.headers.get('content-type')).toBe('application/pkix-crl');
    await writeFile(join(work.dir, 'issuing.crl'), new Uint8Array(await response.arrayBuffer()));
    await writeFile(
      join(work.dir, 'chain.pem'),
      derToPem(pki.issuingCa.certificate, 'CERTIFICATE') + derToPem(pki.root.certificate, 'CERTIFICATE'),
    );
    const text = await openssl([
      'crl',
      '-inform',
      'DER',
      '-in',
      'issuing.crl',
      '-CAfile',
      'chain.pem',
      '-text',
      '-noout',
    ]);
    expect(text).toMatch(/Next Update: /);
    expect(text).toMatch(/X509v3 CRL Number:/);
    const revokedSerial = pki.credentials.find((c) => c.credentialID === 'alice-revoked')!.signer.serialNumberHex;
    expect(text.replace(/:/g, '').toLowerCase()).toContain(revokedSerial.replace(/^0+/, '').toLowerCase());
  });

  it('the quirk sha1-revocation signs the OCSP response and the CRL with SHA-1', async () => {
    sandbox.sandbox.quirks.set(['sha1-revocation']);
    const text = await openssl([
      'ocsp',
      '-issuer',
      'issuing.pem',
      '-cert',
      'alice.pem',
      '-url',
      urls.ocsp,
      '-CAfile',
      'root.pem',
      '-verify_other',
      'issuing.pem',
      '-resp_text',
    ]);
    expect(text).toMatch(/Signature Algorithm: sha1WithRSAEncryption/);
    await writeFile(join(work.dir, 'sha1.crl'), new Uint8Array(await (await fetch(urls.crl)).arrayBuffer()));
    expect(await openssl(['crl', '-inform', 'DER', '-in', 'sha1.crl', '-text', '-noout'])).toMatch(
      /Signature Algorithm: sha1WithRSAEncryption/,
    );
  });
});

describe('esign verify: revocation status the file does not hold', () => {
  it('is fetched: OCSP for the signer, the CRL for the CAs without a responder, each URL once; TOTAL-PASSED', async () => {
    const since = sandbox.sandbox.requestLog.length;
    const { code, report, stderr } = await verify(['--trust', join(work.dir, 'root.pem')]);
    expect(code, stderr).toBe(0);
    const signature = only(report);
    expect(signature).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED', level: 'B-T' });
    expect(signature.chain!.revocation).toMatchObject([
      { status: 'good', source: 'fetched-ocsp', url: urls.ocsp },
      { status: 'good', source: 'fetched-crl', url: urls.rootCrl },
      { status: 'not-checked', source: 'trust-anchor' },
    ]);
    expect(signature.timestamp!.chain!.revocation).toMatchObject([
      { status: 'good', source: 'fetched-crl', url: urls.rootCrl },
      { status: 'not-checked', source: 'trust-anchor' },
    ]);
    // The issuing CA and the TSA share the root's CRL: fetched once.
    expect(pkiCalls(since).sort()).toEqual(['pki GET /root.crl', 'pki POST /ocsp']);
  });

  it('--offline fetches nothing: INDETERMINATE/TRY_LATER, VERIFY_REVOCATION_UNKNOWN, exit 9, one line naming it', async () => {
    const since = sandbox.sandbox.requestLog.length;
    const { code, report, stderr } = await verify(['--offline', '--trust', join(work.dir, 'root.pem')]);
    expect(pkiCalls(since)).toEqual([]);
    expect(code).toBe(9);
    expect(report).toMatchObject({ code: 'VERIFY_REVOCATION_UNKNOWN', valid: false });
    expect(only(report)).toMatchObject({
      status: 'revocation-unknown',
      code: 'VERIFY_REVOCATION_UNKNOWN',
      indication: 'INDETERMINATE',
      subIndication: 'TRY_LATER',
    });
    expect(only(report).chain!.revocation[0]).toMatchObject({
      status: 'unknown',
      source: 'none',
      unestablished: { subIndication: 'TRY_LATER', reason: expect.stringMatching(/--offline/) },
    });
    expect(only(report).problems.join('\n')).toMatch(/signer: the revocation status of .* is not established/);
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^esign: VERIFY_REVOCATION_UNKNOWN: #1 revocation-unknown \(of 1\): (signer|timestamp authority): the revocation status of .* is not established: the file holds no revocation data for it, no fresh answer for it is cached, and --offline fetches none\. Leave out --offline to ask the responders, or pass --revocation soft-fail to accept an unknown status \(not EN 319 102-1\)\.$/,
      ),
    ]);
  });

  it('--revocation soft-fail passes it (TOTAL-PASSED, exit 0) and says so on the signature, in --json and in the text', async () => {
    const args = ['--offline', '--revocation', 'soft-fail', '--trust', join(work.dir, 'root.pem')];
    const { code, report } = await verify(args);
    expect(code).toBe(0);
    expect(only(report)).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect(only(report).warnings.join('\n')).toMatch(
      /signer: the revocation status of .* is not established: .*; passed under --revocation soft-fail \(not EN 319 102-1\)/,
    );
    const text = await verify(args, false);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {2}! signer: the revocation status .* soft-fail/m);
    expect(text.stdout).toMatch(/revocation unknown \(TRY_LATER\)/);
  });

  it('--revocation takes hard or soft-fail only (exit 2)', async () => {
    const { code, stderr } = await verify(['--revocation', 'lenient'], false);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--revocation must be one of hard, soft-fail/);
  });

  it('revocation data signed with SHA-1 is weak: exit 12, VERIFY_WEAK_ALGORITHM, INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE', async () => {
    sandbox.sandbox.quirks.set(['sha1-revocation']);
    const { code, report } = await verify(['--trust', join(work.dir, 'root.pem')]);
    expect(code).toBe(12);
    expect(only(report)).toMatchObject({
      status: 'weak',
      code: 'VERIFY_WEAK_ALGORITHM',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
    });
    expect(only(report).chain!.revocation[0]).toMatchObject({
      status: 'good',
      source: 'fetched-ocsp',
      weak: expect.stringMatching(/OCSP response is signed with sha1WithRSAEncryption/),
    });
  });

  it('the file is not changed by a verification that fetches', async () => {
    const before = await readFile(signedPath);
    await verify(['--trust', join(work.dir, 'root.pem')]);
    expect((await readFile(signedPath)).equals(before)).toBe(true);
  });
});

describe('esign verify: the answers it fetched, cached across runs (ESIGN_CACHE_DIR/revocation)', () => {
  const trust = () => ['--trust', join(work.dir, 'root.pem')];
  /** The cache entry of the signer's OCSP answer (keyed by URL and request: the CertID). */
  const signerEntry = (cache: string) =>
    join(
      cache,
      'revocation',
      `${revocationCacheKey(
        'ocsp',
        urls.ocsp,
        buildOcspRequest(certificateFacts(credential('alice-rsa2048')), certificateFacts(pki.issuingCa.certificate)),
      )}.json`,
    );

  it('a second run asks the sandbox nothing: every answer from the cache, marked cached (--json and text); --offline reads it; 0600 files in a 0700 dir', async () => {
    const cache = freshCache();
    const since = sandbox.sandbox.requestLog.length;
    const first = await verify(trust(), true, cache);
    expect(first.code, first.stderr).toBe(0);
    expect(only(first.report).chain!.revocation[0]).not.toHaveProperty('cached');
    expect(pkiCalls(since).sort()).toEqual(['pki GET /root.crl', 'pki POST /ocsp']);

    const again = sandbox.sandbox.requestLog.length;
    const second = await verify(trust(), true, cache);
    expect(pkiCalls(again)).toEqual([]);
    expect(second.code, second.stderr).toBe(0);
    expect(only(second.report)).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect(only(second.report).chain!.revocation).toMatchObject([
      { status: 'good', source: 'fetched-ocsp', url: urls.ocsp, cached: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      { status: 'good', source: 'fetched-crl', url: urls.rootCrl, cached: expect.any(String) },
      { source: 'trust-anchor' },
    ]);
    const offline = await verify(['--offline', ...trust()], true, cache);
    expect(offline.code, offline.stderr).toBe(0);
    expect(only(offline.report).chain!.revocation[0]).toMatchObject({
      source: 'fetched-ocsp',
      cached: expect.any(String),
    });
    const text = await verify(trust(), false, cache);
    expect(text.stdout).toMatch(/— good \(fetched-ocsp http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp, cached: fetched \d{4}-/);
    expect(pkiCalls(again)).toEqual([]);

    const dir = join(cache, 'revocation');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const names = await readdir(dir);
    // Two entries: the signer's OCSP answer and the root's CRL (its key depends on the sandbox's port, so no order is assumed).
    expect(names).toHaveLength(2);
    expect(names).toContain(basename(signerEntry(cache)));
    for (const name of names) expect(name).toMatch(/^[0-9a-f]{64}\.json$/);
    for (const name of names) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
  });

  it('--no-revocation-cache asks the responders again though the cache holds fresh answers, and keeps nothing; with --offline only the file answers', async () => {
    const cache = freshCache();
    expect((await verify(trust(), true, cache)).code).toBe(0);
    const dir = join(cache, 'revocation');
    const kept = (await readdir(dir)).sort();
    expect(kept).toHaveLength(2);

    const since = sandbox.sandbox.requestLog.length;
    const fresh = await verify(['--no-revocation-cache', ...trust()], true, cache);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(pkiCalls(since).sort()).toEqual(['pki GET /root.crl', 'pki POST /ocsp']);
    expect(only(fresh.report).chain!.revocation[0]).toMatchObject({ status: 'good', source: 'fetched-ocsp' });
    expect(only(fresh.report).chain!.revocation[0]).not.toHaveProperty('cached');

    const offline = await verify(['--offline', '--no-revocation-cache', ...trust()], true, cache);
    expect(offline.code).toBe(9);
    expect(only(offline.report).chain!.revocation[0]).toMatchObject({ status: 'unknown', source: 'none' });

    // Nothing written by those runs: a cache dir they alone used stays absent.
    const untouched = freshCache();
    await verify(['--no-revocation-cache', ...trust()], true, untouched);
    await expect(stat(join(untouched, 'revocation'))).rejects.toThrow(/ENOENT/);
    expect((await readdir(dir)).sort()).toEqual(kept);
  });

  it('an answer past its nextUpdate is fetched again and replaces the entry', async () => {
    const cache = freshCache();
    await verify(trust(), true, cache);
    // The sandbox's own responder, two days ago: good for a day, so stale now.
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    const request = buildOcspRequest(
      certificateFacts(credential('alice-rsa2048')),
      certificateFacts(pki.issuingCa.certificate),
    );
    await writeFile(
      signerEntry(cache),
      encodeRevocationEntry({
        kind: 'ocsp',
        url: urls.ocsp,
        der: buildOcspResponse(pki, request, twoDaysAgo),
        fetchedAt: twoDaysAgo,
      }),
    );
    // Offline, the stale answer is not used.
    const offline = await verify(['--offline', ...trust()], true, cache);
    expect(offline.code).toBe(9);
    expect(only(offline.report).chain!.revocation[0]).toMatchObject({ status: 'unknown', source: 'none' });
    const since = sandbox.sandbox.requestLog.length;
    const online = await verify(trust(), true, cache);
    expect(online.code, online.stderr).toBe(0);
    expect(pkiCalls(since)).toEqual(['pki POST /ocsp']);
    expect(only(online.report).chain!.revocation[0]).not.toHaveProperty('cached');
    const entry = JSON.parse(await readFile(signerEntry(cache), 'utf8')) as { fetchedAt: string };
    expect(new Date(entry.fetchedAt).getTime()).toBeGreaterThan(Date.now() - 120_000);
  });

  it('a corrupt entry is ignored and replaced, never an error', async () => {
    const cache = freshCache();
    await verify(trust(), true, cache);
    await writeFile(signerEntry(cache), '{"format":1,"kind":"ocsp","der":"trunc');
    const since = sandbox.sandbox.requestLog.length;
    const result = await verify(trust(), true, cache);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/cache/i);
    expect(pkiCalls(since)).toEqual(['pki POST /ocsp']);
    const entry = JSON.parse(await readFile(signerEntry(cache), 'utf8')) as { url: string; der: string };
    expect(entry.url).toBe(urls.ocsp);
    // The next run uses the entry written in its place.
    const next = sandbox.sandbox.requestLog.length;
    expect((await verify(trust(), true, cache)).code).toBe(0);
    expect(pkiCalls(next)).toEqual([]);
  });
});
