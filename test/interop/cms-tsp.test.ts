/**
 * esign's CMS and TSP encodings judged by OpenSSL: a detached CMS we assemble verifies with
 * `openssl cms -verify`; requests cross between `openssl ts -query` and our parser/builder; tokens
 * we issue verify with `openssl ts -verify`, and OpenSSL's own TSA replies pass our checks.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedAttributes } from '../../src/core/cms/signed-attributes.js';
import { buildSignedData, verifyRsaPkcs1Sha256 } from '../../src/core/cms/signed-data.js';
import { TSA_POLICY, buildTimeStampReq, parseTimeStampReq } from '../../src/core/tsp/request.js';
import { processTimeStampResp } from '../../src/core/tsp/response.js';
import { buildTimeStampResp, buildTimeStampToken } from '../../src/core/tsp/token.js';
import { buildTstInfo } from '../../src/core/tsp/tst-info.js';
import { OID } from '../../src/core/cms/oids.js';
import type { EsignError } from '../../src/core/errors.js';
import { HttpClient } from '../../src/io/http.js';
import { TsaClient } from '../../src/io/tsa-client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { tempDirForFile } from '../helpers/tmp.js';

let dir = '';
let removeDir: () => Promise<void> = async () => {};
const path = (name: string): string => join(dir, name);

function openssl(args: string[], input?: Uint8Array): { status: number; stdout: string; stderr: string } {
  const result = spawnSync('openssl', args, { cwd: dir, input, encoding: 'buffer' });
  return {
    status: result.status ?? -1,
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8'),
  };
}

function mustOpenssl(args: string[]): string {
  const result = openssl(args);
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}\n${result.stderr}`);
  return result.stdout;
}

const der = (pemFile: string): Uint8Array => {
  mustOpenssl(['x509', '-in', pemFile, '-outform', 'DER', '-out', `${pemFile}.der`]);
  return new Uint8Array(readFileSync(path(`${pemFile}.der`)));
};

beforeAll(async () => {
  ({ dir, remove: removeDir } = await tempDirForFile('esign-interop-cms-'));
  // signer: a throwaway self-signed certificate
  mustOpenssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'signer.key',
    '-out',
    'signer.pem',
    '-subj',
    '/CN=esign interop signer',
    '-days',
    '2',
  ]);
  // TSA: root CA and a TSA certificate with a critical timeStamping extended key usage
  mustOpenssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'root.key',
    '-out',
    'root.pem',
    '-subj',
    '/CN=esign interop root',
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  mustOpenssl([
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'tsa.key',
    '-out',
    'tsa.csr',
    '-subj',
    '/CN=esign interop TSA',
  ]);
  writeFileSync(
    path('tsa.ext'),
    'extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n',
  );
  mustOpenssl([
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'root.pem',
    '-CAkey',
    'root.key',
    '-CAcreateserial',
    '-out',
    'tsa.pem',
    '-days',
    '2',
    '-extfile',
    'tsa.ext',
  ]);
});

afterAll(() => removeDir());

describe('CMS SignedData → openssl cms -verify', () => {
  const data = randomBytes(4096);
  const contentDigest = new Uint8Array(createHash('sha256').update(data).digest());

  function signedCms(signingTime?: Date, token?: Uint8Array): Uint8Array {
    const certificate = der('signer.pem');
    const attributes = buildSignedAttributes({ contentDigest, signerCertificate: certificate, signingTime });
    // What signHash does remotely: PKCS#1 v1.5 over the SHA-256 of the signed attributes.
    const key = createPrivateKey(readFileSync(path('signer.key')));
    const signatureValue = new Uint8Array(sign('sha256', attributes.der, key));
    expect(verifyRsaPkcs1Sha256(signatureValue, attributes.toBeSignedHash, certificate)).toBe(true);
    return buildSignedData({
      signedAttributesDer: attributes.der,
      signatureValue,
      certificates: [certificate],
      unsignedAttributes: token ? { signatureTimeStampToken: token } : undefined,
    });
  }

  function verify(cms: Uint8Array, content: Uint8Array): { status: number; stderr: string } {
    writeFileSync(path('sig.p7s'), cms);
    writeFileSync(path('data.bin'), content);
    return openssl([
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      'sig.p7s',
      '-content',
      'data.bin',
      '-CAfile',
      'signer.pem',
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
  }

  it('verifies a PAdES-style signature (no signing-time)', () => {
    const result = verify(signedCms(), data);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Verification successful/);
  });

  it('verifies a CAdES signature with signing-time and a timestamp token, and shows the attributes', () => {
    const token = issueToken(randomBytes(32));
    const cms = signedCms(new Date(), token);
    const result = verify(cms, data);
    expect(result.status, result.stderr).toBe(0);
    const printed = mustOpenssl(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'sig.p7s']);
    expect(printed).toMatch(/signingTime/);
    expect(printed).toMatch(/id-smime-aa-signingCertificateV2/);
    expect(printed).toMatch(/id-smime-aa-timeStampToken/);
    expect(printed).toMatch(/sha256WithRSAEncryption/);
  });

  it('fails for other content', () => {
    const result = verify(signedCms(), Buffer.concat([data, Buffer.from('x')]));
    expect(result.status).not.toBe(0);
  });
});

describe('TimeStampReq ↔ openssl ts -query', () => {
  it('parses a request made by openssl', () => {
    writeFileSync(path('payload.bin'), 'hello timestamp');
    mustOpenssl([
      'ts',
      '-query',
      '-data',
      'payload.bin',
      '-sha256',
      '-cert',
      '-tspolicy',
      TSA_POLICY,
      '-out',
      'openssl.tsq',
    ]);
    const request = parseTimeStampReq(new Uint8Array(readFileSync(path('openssl.tsq'))));
    expect(request).toMatchObject({ version: 1n, hashAlgorithm: OID.sha256, reqPolicy: TSA_POLICY, certReq: true });
    expect(Buffer.from(request.hashedMessage).toString('hex')).toBe(
      createHash('sha256').update('hello timestamp').digest('hex'),
    );
    expect(request.nonceHex).toMatch(/^[0-9a-f]+$/);
  });

  it('writes requests openssl reads', () => {
    const imprint = createHash('sha256').update('x').digest();
    const nonce = Buffer.from('00f1e2d3c4b5a69788', 'hex');
    writeFileSync(path('esign.tsq'), buildTimeStampReq({ imprint, nonce }));
    const text = mustOpenssl(['ts', '-query', '-in', 'esign.tsq', '-text']);
    expect(text).toMatch(/Version: 1/);
    expect(text).toMatch(/Hash Algorithm: sha256/);
    // the hex dump of the message data, 16 bytes a line
    const dump = text.replace(/[\s-]/g, '').toLowerCase();
    expect(dump).toContain(imprint.subarray(0, 16).toString('hex'));
    expect(dump).toContain(imprint.subarray(16).toString('hex'));
    expect(text).toContain(`Policy OID: ${TSA_POLICY}`);
    expect(text).toMatch(/Nonce: 0xF1E2D3C4B5A69788/i);
    expect(text).toMatch(/Certificate required: yes/);
  });
});

function writeOpensslTsaConfig(policy: string = TSA_POLICY): void {
  writeFileSync(
    path('tsa.cnf'),
    [
      '[ tsa_config ]',
      `dir = ${dir}`,
      'serial = $dir/tsaserial',
      'signer_cert = $dir/tsa.pem',
      'signer_key = $dir/tsa.key',
      'certs = $dir/tsa.pem',
      'signer_digest = sha256',
      `default_policy = ${policy}`,
      'digests = sha256',
      'accuracy = secs:1, millisecs:500',
      'ordering = no',
      'tsa_name = yes',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '',
    ].join('\n'),
  );
  writeFileSync(path('tsaserial'), '1000\n');
}

function issueToken(imprint: Uint8Array, nonce?: Uint8Array): Uint8Array {
  const tsaCertificate = der('tsa.pem');
  return buildTimeStampToken({
    tstInfo: buildTstInfo({
      policy: TSA_POLICY,
      hashAlgorithm: OID.sha256,
      hashedMessage: imprint,
      serialNumber: randomBytes(8),
      genTime: new Date(),
      accuracy: { seconds: 1 },
      nonce,
    }),
    signerCertificate: tsaCertificate,
    privateKey: createPrivateKey(readFileSync(path('tsa.key'))),
    certificates: [tsaCertificate],
  });
}

describe('TimeStampResp ↔ openssl ts', () => {
  it('tokens esign issues verify with openssl ts -verify', () => {
    writeFileSync(path('payload.bin'), 'stamp me');
    const imprint = createHash('sha256').update('stamp me').digest();
    const nonce = Buffer.from('0102030405060708', 'hex');
    writeFileSync(path('query.tsq'), buildTimeStampReq({ imprint, nonce }));
    writeFileSync(path('reply.tsr'), buildTimeStampResp({ status: 0, token: issueToken(imprint, nonce) }));
    const text = mustOpenssl(['ts', '-reply', '-in', 'reply.tsr', '-text']);
    expect(text).toMatch(/Status: Granted/);
    expect(text).toContain(`Policy OID: ${TSA_POLICY}`);
    expect(text).toMatch(/Nonce: 0x0102030405060708/);
    const result = openssl(['ts', '-verify', '-in', 'reply.tsr', '-queryfile', 'query.tsq', '-CAfile', 'root.pem']);
    expect(result.status, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toMatch(/Verification: OK/);
    const data = openssl(['ts', '-verify', '-in', 'reply.tsr', '-data', 'payload.bin', '-CAfile', 'root.pem']);
    expect(data.status, data.stderr + data.stdout).toBe(0);
  });

  it('rejections esign encodes read as such in openssl', () => {
    writeFileSync(
      path('rejected.tsr'),
      buildTimeStampResp({ status: 2, statusString: 'bad algorithm', failInfo: ['badAlg', 'timeNotAvailable'] }),
    );
    const text = mustOpenssl(['ts', '-reply', '-in', 'rejected.tsr', '-text']);
    expect(text).toMatch(/Status: Rejected/);
    expect(text).toMatch(/unrecognized or unsupported algorithm/i);
    expect(text).toMatch(/time source.*not available/i);
  });

  it('accepts replies from an OpenSSL TSA', () => {
    writeOpensslTsaConfig();
    const imprint = createHash('sha256').update('openssl tsa').digest();
    const nonce = randomBytes(8);
    writeFileSync(path('ours.tsq'), buildTimeStampReq({ imprint, nonce }));
    mustOpenssl([
      'ts',
      '-reply',
      '-config',
      'tsa.cnf',
      '-section',
      'tsa_config',
      '-queryfile',
      'ours.tsq',
      '-out',
      'theirs.tsr',
    ]);
    const result = processTimeStampResp(new Uint8Array(readFileSync(path('theirs.tsr'))), {
      imprint,
      nonce,
      trustAnchors: [der('root.pem')],
    });
    expect(BigInt(`0x${result.tstInfo.serialNumber}`)).toBeGreaterThan(0x1000n); // OpenSSL increments the serial file first
    expect(result.tstInfo.accuracy).toEqual({ seconds: 1, millis: 500 });
    expect(result.tstInfo.tsaName).toBe('CN=esign interop TSA');
    expect(Math.abs(result.tstInfo.genTime.getTime() - Date.now())).toBeLessThan(60_000);
  });
});

describe('sandbox TSA and TsaClient against tools we did not write', () => {
  it('answers an `openssl ts -query` request with a reply that passes `openssl ts -verify`', async () => {
    const sandbox = await startSandbox({ dataDir: path('sandbox'), s3: false });
    try {
      writeFileSync(path('sandbox-root.pem'), sandbox.pki.rootPem);
      writeFileSync(path('payload.bin'), randomBytes(10_000));
      mustOpenssl(['ts', '-query', '-data', 'payload.bin', '-sha256', '-cert', '-out', 'sandbox.tsq']);
      const response = await fetch(sandbox.urls.tsaEndpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/timestamp-query',
          authorization: `Basic ${Buffer.from(`${sandbox.secrets.tsaUser}:${sandbox.secrets.tsaPassword}`).toString('base64')}`,
        },
        body: readFileSync(path('sandbox.tsq')),
      });
      expect(response.headers.get('content-type')).toBe('application/timestamp-reply');
      writeFileSync(path('sandbox.tsr'), new Uint8Array(await response.arrayBuffer()));
      const byQuery = openssl([
        'ts',
        '-verify',
        '-in',
        'sandbox.tsr',
        '-queryfile',
        'sandbox.tsq',
        '-CAfile',
        'sandbox-root.pem',
      ]);
      expect(byQuery.status, byQuery.stderr + byQuery.stdout).toBe(0);
      const byData = openssl([
        'ts',
        '-verify',
        '-in',
        'sandbox.tsr',
        '-data',
        'payload.bin',
        '-CAfile',
        'sandbox-root.pem',
      ]);
      expect(byData.status, byData.stderr + byData.stdout).toBe(0);
      expect(mustOpenssl(['ts', '-reply', '-in', 'sandbox.tsr', '-text'])).toMatch(/Accuracy: 0x01 seconds/);
    } finally {
      await sandbox.close();
    }
  });

  it('TsaClient accepts tokens from an `openssl ts -reply` responder over HTTP', async () => {
    writeOpensslTsaConfig();
    await withOpensslResponder(async (url, calls) => {
      const client = new TsaClient({
        urls: [url],
        http: new HttpClient(),
        trustAnchors: async () => [der('root.pem')],
      });
      const imprint = new Uint8Array(createHash('sha256').update('via openssl responder').digest());
      const stamp = await client.timestamp(imprint);
      expect(calls()).toBe(1);
      expect(stamp.chainChecked).toBe(true);
      expect(stamp.tstInfo.tsaName).toBe('CN=esign interop TSA');
      expect(Buffer.from(stamp.tstInfo.messageImprint.hashedMessage).equals(Buffer.from(imprint))).toBe(true);
    });
  });

  it('a TSA with a policy of its own (1.2.3.4.1, as FreeTSA): refused by name by default; tsaPolicy of its OID, or any, accepts its tokens', async () => {
    writeOpensslTsaConfig('1.2.3.4.1');
    await withOpensslResponder(async (url) => {
      const imprint = new Uint8Array(createHash('sha256').update('a TSA of another policy').digest());
      const client = (policy?: string | null) =>
        new TsaClient({
          urls: [url],
          http: new HttpClient(),
          trustAnchors: async () => [der('root.pem')],
          ...(policy === undefined ? {} : { policy }),
          sleep: async () => {},
        });
      // OpenSSL refuses a request for a policy it does not issue under.
      const refused = await client()
        .timestamp(imprint)
        .then(
          () => undefined,
          (error: unknown) => error as EsignError,
        );
      expect(refused?.code).toBe('TSA_REJECTED');
      expect(refused?.hint).toContain('ESIGN_TSA_POLICY');
      expect((await client('1.2.3.4.1').timestamp(imprint)).tstInfo.policy).toBe('1.2.3.4.1');
      expect((await client(null).timestamp(imprint)).tstInfo.policy).toBe('1.2.3.4.1');
    });
  });
});

/** An `openssl ts -reply` responder over HTTP on loopback, with the tsa.cnf written last; `calls` counts its requests. */
async function withOpensslResponder(use: (url: string, calls: () => number) => Promise<void>): Promise<void> {
  let calls = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls++;
      writeFileSync(path('responder.tsq'), Buffer.concat(chunks));
      const made = openssl([
        'ts',
        '-reply',
        '-config',
        'tsa.cnf',
        '-section',
        'tsa_config',
        '-queryfile',
        'responder.tsq',
        '-out',
        'responder.tsr',
      ]);
      if (made.status !== 0) {
        response.writeHead(500).end(made.stderr);
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/timestamp-reply' })
        .end(readFileSync(path('responder.tsr')));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await use(`http://127.0.0.1:${port}/tsa`, () => calls);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}
