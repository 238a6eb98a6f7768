import { X509Certificate, createPublicKey, verify } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCrl, buildOcspResponse } from './pki-routes.js';
import { qualificationCertificate } from '../core/qualification/certificate.js';
import { SANDBOX_CREDENTIAL_SPECS, loadOrCreatePki, pkiUrls, qualifiedPolicy } from './pki.js';
import type { SandboxPki } from './pki.js';

const BASE_URL = 'http://127.0.0.1:4321';
const NOW = new Date('2026-03-01T12:00:00Z');

let dataDir: string;
let pki: SandboxPki;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'esign-pki-'));
  pki = await loadOrCreatePki(dataDir, { baseUrl: BASE_URL, now: NOW });
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function x509(der: Uint8Array): X509Certificate {
  return new X509Certificate(der);
}

function extension(der: Uint8Array, oid: string): pkijs.Extension | undefined {
  return pkijs.Certificate.fromBER(der).extensions?.find((e) => e.extnID === oid);
}

describe('loadOrCreatePki', () => {
  it('creates one PKI when two starts on a fresh data dir race (as parallel commands would)', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'esign-pki-race-'));
    try {
      const [a, b] = await Promise.all([
        loadOrCreatePki(fresh, { baseUrl: BASE_URL, now: NOW }),
        loadOrCreatePki(fresh, { baseUrl: 'http://127.0.0.1:4322', now: NOW }),
      ]);
      expect(a.rootPem).toBe(b.rootPem);
      expect((await loadOrCreatePki(fresh, { baseUrl: BASE_URL, now: NOW })).rootPem).toBe(a.rootPem);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });

  // How long the keys take is for `npm run bench`, not a test: a busy runner may take any time.
  it('creates the whole PKI on a fresh data dir: every key (owner-only) and certificate, and the index naming them', async () => {
    const pkiDir = join(dataDir, 'pki');
    const index = JSON.parse(await readFile(join(pkiDir, 'index.json'), 'utf8')) as { entities: string[] };
    expect(index.entities).toEqual(
      expect.arrayContaining([
        'root',
        'issuing-ca',
        'tsa',
        'ocsp-responder',
        ...pki.credentials.map((c) => c.credentialID),
      ]),
    );
    for (const name of index.entities) {
      expect((await stat(join(pkiDir, `${name}.key.pem`))).mode & 0o777, name).toBe(0o600);
      expect(await readFile(join(pkiDir, `${name}.crt.pem`), 'utf8'), name).toMatch(/^-----BEGIN CERTIFICATE-----/);
    }
  });

  it('builds root → issuing CA → signer chains that verify', () => {
    const root = x509(pki.root.certificate);
    const issuing = x509(pki.issuingCa.certificate);
    expect(root.subject).toContain('CN=esign Sandbox TEST Root CA');
    expect(root.verify(root.publicKey)).toBe(true);
    expect(issuing.subject).toContain('CN=esign Sandbox TEST Issuing CA');
    expect(issuing.checkIssued(root) && issuing.verify(root.publicKey)).toBe(true);
    expect(root.ca && issuing.ca).toBe(true);
    for (const credential of pki.credentials) {
      const [signerDer, caDer, rootDer] = credential.chain;
      const signer = x509(signerDer as Uint8Array);
      expect(signer.subject).toContain('TEST — NOT A QUALIFIED SIGNATURE');
      expect(signer.subject).toContain('O=esign sandbox');
      expect(signer.ca).toBe(false);
      expect(signer.verify(issuing.publicKey)).toBe(true);
      expect(Buffer.from(caDer as Uint8Array).equals(Buffer.from(pki.issuingCa.certificate))).toBe(true);
      expect(Buffer.from(rootDer as Uint8Array).equals(Buffer.from(pki.root.certificate))).toBe(true);
      const publicKey = createPublicKey(credential.signer.privateKey);
      const details = publicKey.asymmetricKeyDetails;
      if (credential.key.type === 'ec')
        expect({ curve: details?.namedCurve, bits: credential.keyBits }).toEqual({
          curve: { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' }[credential.key.curve],
          bits: Number(credential.key.curve.slice(2)),
        });
      else expect(details?.modulusLength).toBe(credential.keyBits);
      expect(signer.publicKey.equals(publicKey)).toBe(true);
    }
  });

  it('reports the credentials and their states', () => {
    const summary = pki.credentials.map((c) => [c.credentialID, c.owner, c.keyBits, c.status, c.statusReason]);
    expect(summary).toEqual([
      ['alice-rsa2048', 'alice', 2048, 'enabled', undefined],
      ['alice-rsa3072', 'alice', 3072, 'enabled', undefined],
      ['alice-disabled', 'alice', 2048, 'disabled', 'disabled by owner'],
      ['alice-expired', 'alice', 2048, 'disabled', 'certificate expired'],
      ['alice-revoked', 'alice', 2048, 'disabled', 'certificate revoked'],
      ['bob-rsa2048', 'bob', 2048, 'enabled', undefined],
      ['alice-ec-p256', 'alice', 256, 'enabled', undefined],
      ['alice-ec-p384', 'alice', 384, 'enabled', undefined],
      ['alice-ec-p521', 'alice', 521, 'enabled', undefined],
      ['alice-rsa-pss', 'alice', 2048, 'enabled', undefined],
      ['acme-seal-totp', 'acme', 2048, 'enabled', undefined],
      ['acme-seal-otp', 'acme', 2048, 'enabled', undefined],
      ['acme-seal-bulk', 'acme', 2048, 'enabled', undefined],
      ['acme-seal-implicit', 'acme', 2048, 'enabled', undefined],
    ]);
    expect(pki.credentials.map((c) => c.key.type)).toEqual([
      'rsa',
      'rsa',
      'rsa',
      'rsa',
      'rsa',
      'rsa',
      'ec',
      'ec',
      'ec',
      'rsa-pss',
      'rsa',
      'rsa',
      'rsa',
      'rsa',
    ]);
    const expired = pki.credentials.find((c) => c.credentialID === 'alice-expired');
    expect(expired?.signer.notAfter.getTime()).toBeLessThan(NOW.getTime() - 300 * 86_400_000);
    const revoked = pki.credentials.find((c) => c.credentialID === 'alice-revoked');
    expect(pki.revokedSerials).toEqual([revoked?.signer.serialNumberHex]);
  });

  it('gives signers key usage digitalSignature + nonRepudiation, CRL and OCSP locations', () => {
    const der = pki.credentials[0]?.signer.certificate as Uint8Array;
    const keyUsage = extension(der, '2.5.29.15');
    expect(keyUsage?.critical).toBe(true);
    const bits = asn1js.fromBER(keyUsage?.extnValue.valueBlock.valueHexView ?? new Uint8Array())
      .result as asn1js.BitString;
    expect(bits.valueBlock.valueHexView[0]).toBe(0xc0);
    const info = x509(der).infoAccess ?? '';
    const urls = pkiUrls(BASE_URL);
    expect(info).toContain(`OCSP - URI:${urls.ocsp}`);
    expect(info).toContain(`CA Issuers - URI:${urls.issuingCa}`);
    expect(
      Buffer.from(extension(der, '2.5.29.31')?.extnValue.valueBlock.valueHexView ?? []).toString('latin1'),
    ).toContain(urls.crl);
  });

  it('gives signers QC statements (no QcSSCD: the list says which keys are on a QSCD) and a QCP policy: seals eseal, people esign, alice-rsa3072 and acme-seal-otp QCP-n/QCP-l', () => {
    const facts = Object.fromEntries(
      pki.credentials.map((c) => {
        const cert = qualificationCertificate(c.signer.certificate);
        return [
          c.credentialID,
          { types: cert.qcTypes, sscd: cert.qcSscd, policies: cert.policies, qc: cert.qcCompliance },
        ];
      }),
    );
    expect(Object.values(facts).every((f) => f.qc)).toBe(true);
    expect(facts['alice-rsa2048']).toEqual({ types: ['esig'], sscd: false, policies: ['0.4.0.194112.1.2'], qc: true });
    expect(facts['alice-rsa3072']).toEqual({ types: ['esig'], sscd: false, policies: ['0.4.0.194112.1.0'], qc: true });
    expect(facts['acme-seal-totp']).toEqual({
      types: ['eseal'],
      sscd: false,
      policies: ['0.4.0.194112.1.3'],
      qc: true,
    });
    expect(facts['acme-seal-otp']).toEqual({
      types: ['eseal'],
      sscd: false,
      policies: ['0.4.0.194112.1.1'],
      qc: true,
    });
    for (const credential of pki.credentials)
      expect(facts[credential.credentialID]?.policies).toEqual([
        qualifiedPolicy(SANDBOX_CREDENTIAL_SPECS.find((spec) => spec.credentialID === credential.credentialID)!),
      ]);
  });

  it('re-issues the end entities of a PKI made before QC statements (index version 1), keeping its root', async () => {
    const old = await mkdtemp(join(tmpdir(), 'esign-pki-v1-'));
    try {
      await cp(join(dataDir, 'pki'), join(old, 'pki'), { recursive: true });
      const indexPath = join(old, 'pki', 'index.json');
      const index = JSON.parse(await readFile(indexPath, 'utf8')) as { version: number };
      await writeFile(indexPath, JSON.stringify({ ...index, version: 1 }));
      const reissued = await loadOrCreatePki(old, { baseUrl: BASE_URL, now: NOW });
      expect(reissued.rootPem).toBe(pki.rootPem);
      expect(reissued.credentials[0]?.signer.serialNumberHex).not.toBe(pki.credentials[0]?.signer.serialNumberHex);
      expect(JSON.parse(await readFile(indexPath, 'utf8')).version).toBe(2);
    } finally {
      await rm(old, { recursive: true, force: true });
    }
  });

  it('issues a TSA certificate with critical extendedKeyUsage timeStamping only', () => {
    const tsa = x509(pki.tsa.certificate);
    expect(tsa.verify(x509(pki.root.certificate).publicKey)).toBe(true);
    expect(tsa.keyUsage).toEqual(['1.3.6.1.5.5.7.3.8']);
    expect(extension(pki.tsa.certificate, '2.5.29.37')?.critical).toBe(true);
    expect(pki.tsaChain.length).toBe(2);
  });

  it('issues an OCSP responder certificate with OCSPSigning and ocsp-nocheck', () => {
    const responder = x509(pki.ocspResponder.certificate);
    expect(responder.verify(x509(pki.issuingCa.certificate).publicKey)).toBe(true);
    expect(responder.keyUsage).toEqual(['1.3.6.1.5.5.7.3.9']);
    expect(extension(pki.ocspResponder.certificate, '1.3.6.1.5.5.7.48.1.5')).toBeDefined();
  });

  it('keeps private keys with mode 0600 and loads the same PKI afterwards', async () => {
    const mode = (await stat(join(dataDir, 'pki', 'alice-rsa2048.key.pem'))).mode & 0o777;
    expect(mode).toBe(0o600);
    expect(await readFile(join(dataDir, 'pki', 'index.json'), 'utf8')).toContain(BASE_URL);
    const again = await loadOrCreatePki(dataDir, { baseUrl: BASE_URL, now: NOW });
    expect(again.root.serialNumberHex).toBe(pki.root.serialNumberHex);
    expect(again.credentials.map((c) => c.signer.serialNumberHex)).toEqual(
      pki.credentials.map((c) => c.signer.serialNumberHex),
    );
    expect(again.revokedSerials).toEqual(pki.revokedSerials);
    expect(again.rootPem).toBe(pki.rootPem);
  });

  it('keeps the root, re-issues the issuing CA with the same key and name (its CRL URL follows the port) and the end entities', async () => {
    const otherBase = 'http://127.0.0.1:5555';
    const moved = await loadOrCreatePki(dataDir, { baseUrl: otherBase, now: NOW });
    expect(moved.root.certificatePem).toBe(pki.root.certificatePem);
    expect(x509(moved.issuingCa.certificate).subject).toBe(x509(pki.issuingCa.certificate).subject);
    expect(createPublicKey(moved.issuingCa.privateKey).equals(createPublicKey(pki.issuingCa.privateKey))).toBe(true);
    expect(x509(pki.issuingCa.certificate).checkIssued(x509(moved.root.certificate))).toBe(true);
    expect(Buffer.from(moved.issuingCa.certificate).toString('latin1')).toContain(pkiUrls(otherBase).rootCrl);
    const before = pki.credentials[0];
    const after = moved.credentials[0];
    expect(after?.signer.serialNumberHex).not.toBe(before?.signer.serialNumberHex);
    expect(createPublicKey(after!.signer.privateKey).equals(createPublicKey(before!.signer.privateKey))).toBe(true);
    expect(x509(after!.signer.certificate).infoAccess).toContain(pkiUrls(otherBase).ocsp);
    const revoked = moved.credentials.find((c) => c.credentialID === 'alice-revoked');
    expect(moved.revokedSerials).toEqual([revoked?.signer.serialNumberHex]);
    expect(revoked?.status).toBe('disabled');
  });
});

describe('CRL and OCSP', () => {
  it('publishes a CRL signed by the issuing CA that lists the revoked signer', () => {
    const crl = pkijs.CertificateRevocationList.fromBER(buildCrl(pki, NOW));
    const issuingKey = x509(pki.issuingCa.certificate).publicKey;
    expect(verify('sha256', crl.tbsView, issuingKey, Buffer.from(crl.signatureValue.valueBlock.valueHexView))).toBe(
      true,
    );
    const serials = (crl.revokedCertificates ?? []).map((entry) =>
      Buffer.from(entry.userCertificate.valueBlock.valueHexView).toString('hex'),
    );
    expect(serials).toEqual(pki.revokedSerials);
  });

  it('answers OCSP good, revoked and unknown, signed by the responder certificate', async () => {
    const issuerCertificate = pkijs.Certificate.fromBER(pki.issuingCa.certificate);
    const statusOf = async (der: Uint8Array): Promise<number> => {
      const reqCert = await pkijs.CertID.create(pkijs.Certificate.fromBER(der), {
        hashAlgorithm: 'SHA-256',
        issuerCertificate,
      });
      const request = new pkijs.OCSPRequest({
        tbsRequest: new pkijs.TBSRequest({ requestList: [new pkijs.Request({ reqCert })] }),
      });
      const response = pkijs.OCSPResponse.fromBER(
        buildOcspResponse(pki, new Uint8Array(request.toSchema(true).toBER(false)), NOW),
      );
      const basic = pkijs.BasicOCSPResponse.fromBER(
        response.responseBytes?.response.valueBlock.valueHexView ?? new Uint8Array(),
      );
      const signer = x509(pki.ocspResponder.certificate).publicKey;
      expect(
        verify('sha256', basic.tbsResponseData.tbsView, signer, Buffer.from(basic.signature.valueBlock.valueHexView)),
      ).toBe(true);
      return (basic.tbsResponseData.responses[0]?.certStatus as asn1js.BaseBlock).idBlock.tagNumber;
    };
    const byId = (id: string) => pki.credentials.find((c) => c.credentialID === id)?.signer.certificate as Uint8Array;
    expect(await statusOf(byId('alice-rsa2048'))).toBe(0);
    expect(await statusOf(byId('alice-revoked'))).toBe(1);
    expect(await statusOf(pki.tsa.certificate)).toBe(2);
  });
});
