import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreatePki, pkiUrls, type SandboxPki } from '../../sandbox/pki.js';
import { buildCrl, buildOcspResponse } from '../../sandbox/pki-routes.js';
import { EsignError, isEsignError } from '../errors.js';
import { bytesSource } from '../pdf/index.js';
import { certificateFacts } from './certificates.js';
import { appendedSource } from './extend.js';
import {
  buildOcspRequest,
  checkCrl,
  checkOcspResponse,
  collectValidationData,
  RevocationCache,
  trimDer,
} from './index.js';
import type { RevocationFetcher } from './index.js';

const BASE = 'http://127.0.0.1:9/pki';
const NOW = new Date('2026-03-01T12:00:00Z');
let pki: SandboxPki;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-ltv-unit-'));
  pki = await loadOrCreatePki(dir, { baseUrl: BASE, now: NOW });
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const alice = (): Uint8Array => pki.credentials.find((c) => c.status === 'enabled')!.signer.certificate;
const revoked = (): Uint8Array =>
  pki.credentials.find((c) => c.statusReason === 'certificate revoked')!.signer.certificate;

/** The sandbox PKI's endpoints, in memory, counting calls. */
function fakeFetcher(overrides: Partial<RevocationFetcher> = {}): RevocationFetcher & { calls: string[] } {
  const urls = pkiUrls(BASE);
  const calls: string[] = [];
  return {
    calls,
    ocsp: overrides.ocsp ?? (async (url, request) => (calls.push(`ocsp ${url}`), buildOcspResponse(pki, request, NOW))),
    crl:
      overrides.crl ??
      (async (url) => (calls.push(`crl ${url}`), buildCrl(pki, NOW, url === urls.rootCrl ? 'root' : 'issuing'))),
    certificate:
      overrides.certificate ??
      (async (url) => {
        calls.push(`cert ${url}`);
        if (url === urls.issuingCa) return pki.issuingCa.certificate;
        throw new Error(`unexpected ${url}`);
      }),
  };
}

function code(error: unknown): string | undefined {
  return isEsignError(error) ? error.code : undefined;
}

describe('certificate facts', () => {
  it('reads the AIA OCSP and caIssuers URLs, the CRL distribution point, self-signed roots and OCSP no-check', () => {
    const urls = pkiUrls(BASE);
    expect(certificateFacts(alice())).toMatchObject({
      ocspUrls: [urls.ocsp],
      caIssuersUrls: [urls.issuingCa],
      crlUrls: [urls.crl],
      selfSigned: false,
    });
    expect(certificateFacts(pki.root.certificate).selfSigned).toBe(true);
    expect(certificateFacts(pki.ocspResponder.certificate)).toMatchObject({
      ocspNoCheck: true,
      extendedKeyUsages: ['1.3.6.1.5.5.7.3.9'],
    });
  });
});

describe('OCSP', () => {
  const issuer = () => certificateFacts(pki.issuingCa.certificate);

  it('accepts a response signed by the delegated responder: good for a valid signer, revoked for the revoked one', () => {
    const good = checkOcspResponse(
      buildOcspResponse(pki, buildOcspRequest(certificateFacts(alice()), issuer()), NOW),
      certificateFacts(alice()),
      issuer(),
    );
    expect(good.status).toEqual({ kind: 'good' });
    expect(Buffer.from(good.responder).equals(Buffer.from(pki.ocspResponder.certificate))).toBe(true);
    const bad = checkOcspResponse(
      buildOcspResponse(pki, buildOcspRequest(certificateFacts(revoked()), issuer()), NOW),
      certificateFacts(revoked()),
      issuer(),
    );
    expect(bad.status.kind).toBe('revoked');
  });

  it('refuses a response about another certificate, a tampered signature and an error status', () => {
    const response = buildOcspResponse(pki, buildOcspRequest(certificateFacts(alice()), issuer()), NOW);
    expect(() => checkOcspResponse(response, certificateFacts(revoked()), issuer(), 'http://x/ocsp')).toThrow(
      /says nothing about/,
    );
    // Flip one bit of the BasicOCSPResponse signature value and re-wrap it.
    const outer = pkijs.OCSPResponse.fromBER(response);
    const basic = pkijs.BasicOCSPResponse.fromBER(outer.responseBytes!.response.valueBlock.valueHexView);
    const signature = new Uint8Array(basic.signature.valueBlock.valueHexView);
    signature[10]! ^= 0x01;
    basic.signature = new asn1js.BitString({ valueHex: signature });
    outer.responseBytes!.response = new asn1js.OctetString({ valueHex: basic.toSchema().toBER(false) });
    const tampered = new Uint8Array(outer.toSchema().toBER(false));
    let error: unknown;
    try {
      checkOcspResponse(tampered, certificateFacts(alice()), issuer());
    } catch (caught) {
      error = caught;
    }
    expect(code(error)).toBe('REVOCATION_BAD_RESPONSE');
    expect((error as Error).message).toMatch(/not signed by/);
    // OCSPResponse { responseStatus tryLater (3) }
    expect(() =>
      checkOcspResponse(Uint8Array.of(0x30, 0x03, 0x0a, 0x01, 0x03), certificateFacts(alice()), issuer()),
    ).toThrow(/tryLater/);
  });
});

describe('CRL', () => {
  it('accepts the issuing CA CRL with its revoked serials, and refuses it as the root CA CRL', () => {
    const crl = checkCrl(buildCrl(pki, NOW), certificateFacts(pki.issuingCa.certificate));
    expect(crl.revoked.has(certificateFacts(revoked()).serialNumber)).toBe(true);
    expect(crl.revoked.has(certificateFacts(alice()).serialNumber)).toBe(false);
    expect(() => checkCrl(buildCrl(pki, NOW), certificateFacts(pki.root.certificate))).toThrow(/not issued by/);
  });
});

describe('collectValidationData', () => {
  it('collects both chains: OCSP and CRL for the signer, the root CRL once for the issuing CA and the TSA', async () => {
    const fetcher = fakeFetcher();
    const data = await collectValidationData(
      [
        {
          role: 'signer',
          leaf: alice(),
          pool: [alice(), pki.issuingCa.certificate, pki.root.certificate],
          usedAt: NOW,
        },
        { role: 'tsa', leaf: pki.tsa.certificate, pool: pki.tsaChain, usedAt: NOW },
      ],
      fetcher,
    );
    expect(data.certs).toHaveLength(5); // signer, issuing CA, root, TSA, OCSP responder
    expect(data.ocsps).toHaveLength(1);
    expect(data.crls).toHaveLength(2); // issuing CA CRL, root CRL
    expect(data.checks.map((check) => `${check.source} ${check.status} ${check.url}`)).toEqual([
      `ocsp good ${pkiUrls(BASE).ocsp}`,
      `crl good ${pkiUrls(BASE).crl}`,
      `crl good ${pkiUrls(BASE).rootCrl}`,
      `crl good ${pkiUrls(BASE).rootCrl}`,
    ]);
    expect(data.warnings).toEqual([]);
    expect(fetcher.calls).toEqual([
      `ocsp ${pkiUrls(BASE).ocsp}`,
      `crl ${pkiUrls(BASE).crl}`,
      `crl ${pkiUrls(BASE).rootCrl}`,
    ]);
  });

  it('fetches a missing issuer from caIssuers', async () => {
    const fetcher = fakeFetcher();
    const data = await collectValidationData(
      [{ role: 'signer', leaf: alice(), pool: [alice()], usedAt: NOW }],
      fetcher,
    );
    expect(fetcher.calls[0]).toBe(`cert ${pkiUrls(BASE).issuingCa}`);
    expect(data.certs.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a certificate revoked before it was used, and accepts one revoked after', async () => {
    const pool = [revoked(), pki.issuingCa.certificate, pki.root.certificate];
    let error: unknown;
    try {
      await collectValidationData([{ role: 'signer', leaf: revoked(), pool, usedAt: NOW }], fakeFetcher());
    } catch (caught) {
      error = caught;
    }
    expect(code(error)).toBe('REVOCATION_CERT_REVOKED');
    const early = new Date(pki.revocations[0]!.revokedAt.getTime() - 60_000);
    const data = await collectValidationData([{ role: 'signer', leaf: revoked(), pool, usedAt: early }], fakeFetcher());
    const leafSerial = certificateFacts(revoked()).serialNumber;
    const leafChecks = data.checks.filter((check) => check.serialNumber === leafSerial);
    expect(leafChecks.map((check) => check.status)).toEqual(['revoked', 'revoked']);
  });

  it('passes a fetch failure through', async () => {
    const failing = fakeFetcher({ ocsp: async () => Promise.reject(new Error('down')) });
    await expect(
      collectValidationData(
        [{ role: 'signer', leaf: alice(), pool: [alice(), pki.issuingCa.certificate], usedAt: NOW }],
        failing,
      ),
    ).rejects.toThrow('down');
  });
});

describe('RevocationCache (one batch window)', () => {
  const targets = () => [
    {
      role: 'signer' as const,
      leaf: alice(),
      pool: [alice(), pki.issuingCa.certificate, pki.root.certificate],
      usedAt: NOW,
    },
    { role: 'tsa' as const, leaf: pki.tsa.certificate, pool: pki.tsaChain, usedAt: NOW },
  ];

  it("fetches and checks each certificate's OCSP response and CRL once for all documents of the window", async () => {
    const fetcher = fakeFetcher();
    const cache = new RevocationCache(fetcher, { now: () => NOW });
    const documents = await Promise.all(
      Array.from({ length: 5 }, () => collectValidationData(targets(), fetcher, [], cache)),
    );
    expect(fetcher.calls.filter((call) => call.startsWith('ocsp'))).toHaveLength(1);
    expect(fetcher.calls.filter((call) => call.startsWith('crl'))).toHaveLength(2);
    for (const data of documents)
      expect({ ocsps: data.ocsps.length, crls: data.crls.length }).toEqual({ ocsps: 1, crls: 2 });
    // The next window asks again (news of a revocation reaches the batch at its next window).
    await collectValidationData(targets(), fetcher, [], new RevocationCache(fetcher, { now: () => NOW }));
    expect(fetcher.calls.filter((call) => call.startsWith('ocsp'))).toHaveLength(2);
  });

  it('fetches again a response whose nextUpdate has passed before the window is written', async () => {
    const fetcher = fakeFetcher();
    let now = NOW;
    const cache = new RevocationCache(fetcher, { now: () => now });
    await collectValidationData(targets(), fetcher, [], cache);
    now = new Date(NOW.getTime() + 2 * 86_400_000); // past the OCSP response's nextUpdate (1 day), not the CRLs' (7 days)
    await collectValidationData(targets(), fetcher, [], cache);
    expect(fetcher.calls.filter((call) => call.startsWith('ocsp'))).toHaveLength(2);
    expect(fetcher.calls.filter((call) => call.startsWith('crl'))).toHaveLength(2);
  });

  it("asks once more for an OCSP response produced before the window's last signature", async () => {
    let produced = new Date(NOW.getTime() - 3_600_000);
    const fetcher = fakeFetcher({
      ocsp: async (_url, request) =>
        buildOcspResponse(pki, request, (produced = new Date(produced.getTime() + 3_600_000))),
    });
    const cache = new RevocationCache(fetcher, { issuedAfter: new Date(NOW.getTime() + 1_000) });
    const data = await collectValidationData(targets(), fetcher, [], cache);
    const basic = pkijs.BasicOCSPResponse.fromBER(
      pkijs.OCSPResponse.fromBER(data.ocsps[0]!).responseBytes!.response.valueBlock.valueHexView,
    );
    expect(basic.tbsResponseData.producedAt.getTime()).toBe(NOW.getTime() + 3_600_000);
  });

  it('an OCSP responder that is down or answers garbage: the CRL stands in, with a warning; its failure is asked once per window', async () => {
    for (const ocsp of [
      async () => {
        throw new EsignError(
          'REVOCATION_UNAVAILABLE',
          'No revocation data from the OCSP responder at http://127.0.0.1:9/pki/ocsp: timed out.',
        );
      },
      async () => new Uint8Array([0x30, 0x03, 0x0a, 0x01, 0x00]),
    ]) {
      let asked = 0;
      const fetcher = fakeFetcher({ ocsp: () => (asked++, ocsp()) });
      const cache = new RevocationCache(fetcher);
      const [data] = await Promise.all(
        Array.from({ length: 3 }, () => collectValidationData(targets(), fetcher, [], cache)),
      );
      expect(asked).toBe(1);
      expect(data!.ocsps).toHaveLength(0);
      expect(data!.crls).toHaveLength(2);
      expect(data!.warnings.join('\n')).toMatch(/OCSP .*; the CRL of esign Sandbox TEST Issuing CA stands in for it\./);
      expect(data!.checks.filter((check) => check.source === 'crl').every((check) => check.status === 'good')).toBe(
        true,
      );
    }
  });
});

describe('helpers', () => {
  it('appendedSource reads across the boundary; trimDer drops the /Contents zero padding', async () => {
    const source = appendedSource(bytesSource(Uint8Array.of(1, 2, 3)), Uint8Array.of(4, 5));
    expect(source.size).toBe(5);
    expect([...(await source.read(1, 3))]).toEqual([2, 3, 4]);
    expect([...(await source.read(3, 10))]).toEqual([4, 5]);
    expect([...trimDer(Uint8Array.of(0x30, 0x02, 0x05, 0x00, 0, 0, 0))]).toEqual([0x30, 0x02, 0x05, 0x00]);
    const long = new Uint8Array(300);
    long.set([0x30, 0x81, 0x80]);
    expect(trimDer(long)).toHaveLength(131);
  });
});
