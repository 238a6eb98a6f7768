/**
 * esign against certomancer-csc-dummy, the CSC v1.0.4 test server pyHanko's CI runs: a signing
 * service we did not write, with certomancer's testing PKI (RSA `testing-ca`, EC P-384
 * `testing-ca-ecdsa`, an intermediate below each root). Its `info` says `authType: ["external"]`, its
 * credentials are implicit, SCAL 2, multisign 10. openssl cms -verify judges every output given only
 * the root the server itself reports. It is neither on npm nor in Debian, so CI cannot run this file:
 * it runs only when ESIGN_CERTOMANCER_CSC_URL points at a running server (docs/interop.md).
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { opensslVerifiesCms, pdfsig, runTool, nssDbTrusting } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDirForFile } from '../helpers/tmp.js';

const URL = process.env['ESIGN_CERTOMANCER_CSC_URL'];
const SKIPPED =
  'skipped: set ESIGN_CERTOMANCER_CSC_URL to a running certomancer-csc-dummy (not on npm or Debian; docs/interop.md)';
const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['openssl', 'pdfsig', 'certutil'].filter((tool) => !has(tool));
if (!URL) console.warn(`interop certomancer-csc tests ${SKIPPED}`);

const ARCHITECTURES = { rsa: 'testing-ca', ec: 'testing-ca-ecdsa' } as const;
let work: { dir: string; remove: () => Promise<void> };
const roots: Record<string, string> = {};
const nssDirs: Record<string, string> = {};
/** The env profile for the server: no OAuth (external), no client secret. */
const env = () => ({
  ESIGN_CONFIG_DIR: join(work.dir, 'config'),
  ESIGN_SIGNING_URL: URL!,
  ESIGN_SERVICE_AUTH: 'external',
});

/** The root of an architecture as the running server reports it (certomancer re-makes EC certificates at each start). */
async function rootPem(architecture: string): Promise<string> {
  const response = await fetch(`${URL}/csc/v1/credentials/info`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ credentialID: `${architecture}/root`, certificates: 'single' }),
  });
  expect(response.status).toBe(200);
  const der = ((await response.json()) as { cert: { certificates: string[] } }).cert.certificates[0]!;
  return `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

beforeAll(async () => {
  if (!URL || missing.length > 0) return;
  work = await tempDirForFile('esign-interop-certomancer-');
  for (const [kind, architecture] of Object.entries(ARCHITECTURES)) {
    roots[kind] = join(work.dir, `${architecture}-root.pem`);
    await writeFile(roots[kind], await rootPem(architecture));
    const dir = join(work.dir, kind);
    await mkdir(dir, { recursive: true });
    nssDirs[kind] = await nssDbTrusting(dir, roots[kind]);
  }
});
afterAll(async () => {
  await work?.remove();
});

describe.skipIf(!URL || missing.length > 0)(
  `certomancer-csc-dummy, a CSC v1 server we did not write (${URL ? `ESIGN_CERTOMANCER_CSC_URL=${URL}` : SKIPPED})`,
  () => {
    it('credentials list: its RSA and EC P-384 credentials, implicit, multisign 10', async () => {
      const listed = await runCli(['--json', 'credentials', 'list'], { env: env() });
      expect(listed.code, listed.stderr).toBe(0);
      const { signingService, credentials } = listed.json<{
        signingService: { cscVersion: string };
        credentials: Array<{
          credentialID: string;
          keyAlgorithm: string;
          authorization: { mode: string; multisign: number; scal: string };
        }>;
      }>();
      expect(signingService.cscVersion).toBe('1');
      const byId = new Map(credentials.map((credential) => [credential.credentialID, credential]));
      for (const [id, keyAlgorithm] of [
        ['testing-ca/signer1-long', 'RSA'],
        ['testing-ca-ecdsa/signer1-long', 'EC'],
      ] as const) {
        expect(byId.get(id), id).toMatchObject({
          keyAlgorithm,
          authorization: { mode: 'implicit', multisign: 10, scal: '2' },
        });
      }
    });

    for (const [kind, architecture] of Object.entries(ARCHITECTURES)) {
      it(`${architecture}/signer1-long signs a PDF and a .p7s; openssl cms -verify accepts both given only the root, pdfsig the signature`, async () => {
        const dir = join(work.dir, kind);
        const input = await pdfLibPdf(dir);
        const pdf = join(dir, 'signed.pdf');
        const signed = await runCli(['--quiet', 'sign', '-c', `${architecture}/signer1-long`, '-o', pdf, input], {
          env: env(),
        });
        expect(signed.code, signed.stderr).toBe(0);
        await opensslVerifiesCms(pdf, roots[kind]!);
        // pdfsig checks the signature; its certificate verdict for this PKI is "Unknown issue" even for a
        // PDF pyHanko signs with the same key, so only the signature itself is asserted here.
        const judged = await pdfsig(pdf, nssDirs[kind]!);
        expect(judged.signatures, judged.raw).toEqual([expect.objectContaining({ valid: true, totalDocument: true })]);

        const text = join(dir, 'note.txt');
        await writeFile(text, `signed at certomancer-csc-dummy with ${architecture}\n`);
        const p7s = join(dir, 'note.p7s');
        const detached = await runCli(['--quiet', 'sign', '-c', `${architecture}/signer1-long`, '-o', p7s, text], {
          env: env(),
        });
        expect(detached.code, detached.stderr).toBe(0);
        const verify = await runTool('openssl', [
          'cms',
          '-verify',
          '-binary',
          '-inform',
          'DER',
          '-in',
          p7s,
          '-content',
          text,
          '-CAfile',
          roots[kind]!,
          '-purpose',
          'any',
          '-out',
          '/dev/null',
        ]);
        expect(verify.status, verify.stderr).toBe(0);
        expect(verify.stderr).toContain('Verification successful');
      });
    }

    it('a batch of 12, more than its multisign of 10: every output judged by openssl given only the root', async () => {
      const dir = join(work.dir, 'batch');
      const inputs = join(dir, 'in');
      await mkdir(inputs, { recursive: true });
      const input = await pdfLibPdf(dir);
      for (let index = 0; index < 12; index++) await copyFile(input, join(inputs, `doc-${index}.pdf`));
      const signed = await runCli(
        ['--quiet', 'sign', '-c', 'testing-ca/signer1-long', '--output-dir', join(dir, 'out'), inputs],
        { env: env() },
      );
      expect(signed.code, signed.stderr).toBe(0);
      const outputs = await readdir(join(dir, 'out'));
      expect(outputs.filter((name) => name.endsWith('-signed.pdf'))).toHaveLength(12);
      for (const name of outputs.filter((file) => file.endsWith('-signed.pdf')))
        await opensslVerifiesCms(join(dir, 'out', name), roots['rsa']!);
    });

    for (const architecture of Object.values(ARCHITECTURES)) {
      it(`${architecture}/signer1, whose certificate expired in 2022, is refused with exit 11 and no output`, async () => {
        const dir = join(work.dir, `expired-${architecture}`);
        await mkdir(dir, { recursive: true });
        const output = join(dir, 'expired.pdf');
        const refused = await runCli(['sign', '-c', `${architecture}/signer1`, '-o', output, await pdfLibPdf(dir)], {
          env: env(),
        });
        expect(refused.code, refused.stderr).toBe(11);
        expect(refused.stderr).toMatch(new RegExp(`credential ${architecture}/signer1 expired on 2022-01-01`));
        expect(existsSync(output)).toBe(false);
      });
    }
  },
);
